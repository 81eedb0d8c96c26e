import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { api } from '../../support/hub-helpers.js';
import { scratchDir } from '../../support/scratch-dir.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';

test('lookout-builder: the bin prints a ready line with its URL, needs the token from the environment, and stops on SIGTERM', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  const token = 'cli-test-token-0042';
  const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'lookout-builder.js'), '--port', '0', '--data-dir', dir, '--dataset-root', dir], {
    env: { ...process.env, LOOKOUT_BUILDER_TOKEN: token, LOOKOUT_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  const lines = createInterface({ input: child.stdout });
  const [first] = (await once(lines, 'line')) as [string];
  const ready = JSON.parse(first);
  assert.equal(ready.ready, true);
  assert.equal(ready.service, 'lookout-builder');
  assert.equal((await api(ready.url, '/api/health')).body.service, 'lookout-builder');
  assert.equal((await api(ready.url, '/api/ontology')).status, 401);
  assert.equal((await api(ready.url, '/api/ontology', { token })).status, 200);
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number];
  assert.equal(code, 0);

  const bad = spawn(process.execPath, [join(packageRoot(), 'bin', 'lookout-builder.js'), '--port', 'x'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  bad.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const [badCode] = (await once(bad, 'exit')) as [number];
  assert.equal(badCode, 2);
  assert.match(err, /--port x/);
});
