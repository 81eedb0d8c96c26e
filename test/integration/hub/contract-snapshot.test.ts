/**
 * What clients and plugin authors see of the wire, held still: the hub's OpenAPI document (full plugin
 * set), the JSON Schemas in dist/schemas/ and `lookout plugins --json`, compared with the copies in
 * test/fixtures/contract-snapshot/. A refactor of the house (issue 27) must leave them identical; a change
 * that means to alter the wire rewrites them (`LOOKOUT_UPDATE_CONTRACT_SNAPSHOT=1 node --test
 * dist/test/integration/hub/contract-snapshot.test.js`), so that the difference is read in review.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { api, testHub } from '../../support/hub-helpers.js';

const TOKEN = 'contract-snapshot-token-7d1f';
const FIXTURES = join(packageRoot(), 'test', 'fixtures', 'contract-snapshot');
const UPDATE = process.env.LOOKOUT_UPDATE_CONTRACT_SNAPSHOT === '1';

/** Compares with the stored copy (or stores it when updating); stable key order from the producers themselves. */
async function holds(name: string, value: unknown): Promise<void> {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  const path = join(FIXTURES, name);
  if (UPDATE) return writeFile(path, text);
  const stored = await readFile(path, 'utf8');
  assert.deepEqual(JSON.parse(text), JSON.parse(stored), `${name} differs from test/fixtures/contract-snapshot/${name}`);
}

describe('the wire contract snapshot', () => {
  let hub: RunningHub;

  before(async () => {
    const set = await loadHubPluginSet();
    hub = await testHub({ token: TOKEN, host: '127.0.0.1', plugins: set.plugins, essential: set.essential });
  });

  after(async () => {
    await hub?.close();
  });

  it("the hub's OpenAPI document is the stored one", async () => {
    const doc = (await api(hub.url, '/openapi.json', { token: TOKEN })).body as { servers?: unknown };
    // The server address is this run's port: not part of the contract.
    delete doc.servers;
    await holds('openapi.json', doc);
  });

  it('the JSON Schemas in dist/schemas/ are the stored ones', async () => {
    const dir = join(packageRoot(), 'dist', 'schemas');
    const names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
    const schemas: Record<string, unknown> = {};
    for (const name of names) schemas[name] = JSON.parse(await readFile(join(dir, name), 'utf8'));
    await holds('schemas.json', schemas);
  });

  it('`lookout plugins --json` is the stored list', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(packageRoot(), 'bin', 'lookout.js'), 'plugins', '--json'], { maxBuffer: 16 << 20 });
    await holds('plugins.json', JSON.parse(stdout));
  });
});
