/**
 * `npm start` as a newcomer runs it (scripts/start.mjs): the hub, its embedded broker, the model builder
 * and the simulated fleet come up, the banner says where to look, the addresses it prints answer, and Ctrl-C (SIGTERM
 * here) stops everything. Its fleet lives in a folder of the test's own (LOOKOUT_DEV_DIR) and every
 * port is picked by the system, so it runs beside a developer's own `npm start`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';

const BANNER_END = 'Ctrl-C stops everything.';

describe('npm start', () => {
  let child: ChildProcess;
  let output = '';
  let hubUrl = '';
  const dir = mkdtempSync(join(tmpdir(), 'lookout-start-'));

  before(async () => {
    child = spawn(process.execPath, [join(packageRoot(), 'scripts', 'start.mjs')], {
      cwd: packageRoot(),
      env: { ...process.env, LOOKOUT_DEV_DIR: dir, LOOKOUT_HUB_PORT: '0', LOOKOUT_BROKER_PORT: '0', LOOKOUT_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner within 180 s:\n${output}`)), 180_000);
      const check = () => {
        if (!output.includes(BANNER_END)) return;
        clearTimeout(timer);
        resolve();
      };
      child.stdout!.on('data', check);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`npm start exited with ${code}:\n${output}`));
      });
    });
    hubUrl = /^ {2}hub +(http:\/\/\S+)$/m.exec(output)?.[1] ?? '';
  });

  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints where to look: the console, the hub, OpenAPI and every simulated camera', () => {
    assert.match(hubUrl, /^http:\/\/127\.0\.0\.1:\d+$/, output);
    for (const line of ['console', 'fleet cache', 'OpenAPI', 'broker']) assert.match(output, new RegExp(`^ {2}${line} +\\S+`, 'm'), output);
    assert.match(output, /Lookout is running: a hub, its embedded broker and \d+ simulated cameras/, output);
  });

  it('answers at the printed addresses: the registry lists the fleet and the cache fills', async () => {
    const registry = (await (await fetch(`${hubUrl}/fleet/registry`)).json()) as { shadows: { device_id: string }[] };
    const devices = /and (\d+) simulated cameras/.exec(output)![1];
    assert.equal(registry.shadows.length, Number(devices), JSON.stringify(registry));
    const deadline = Date.now() + 60_000;
    let latest: Record<string, unknown> = {};
    while (Date.now() < deadline) {
      latest = (await (await fetch(`${hubUrl}/fleet/mqtt/latest`)).json()) as Record<string, unknown>;
      if (JSON.stringify(latest).includes('"dets"')) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    assert.ok(JSON.stringify(latest).includes('"dets"'), `a device's dets reach the cache: ${JSON.stringify(latest).slice(0, 500)}`);
    assert.equal((await fetch(`${hubUrl}/openapi.json`)).status, 200);
  });

  it('runs the model builder beside the hub: /api/* through the hub reaches it', async () => {
    assert.match(output, /^ {2}model builder +\S+\/api\/ontology/m, output);
    const r = await fetch(`${hubUrl}/api/ontology`);
    const text = await r.text();
    assert.equal(r.status, 200, text);
    assert.match(text, /handgun/, 'the weapons default ontology');
    // The README's next two lines, as written there.
    const compiled = await fetch(`${hubUrl}/api/ontology/compile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const labels = (await compiled.json()) as { ontology_hash?: string };
    assert.ok([200, 201].includes(compiled.status), JSON.stringify(labels));
    assert.match(labels.ontology_hash ?? '', /^sha256:/);
    assert.equal((await fetch(`${hubUrl}/api/pipeline/jobs`)).status, 200);
  });

  it('stops everything on SIGTERM (Ctrl-C), exiting 0', async () => {
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output.slice(-2000));
  });
});
