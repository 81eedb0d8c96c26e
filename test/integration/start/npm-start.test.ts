/**
 * `npm start` as a newcomer runs it (scripts/start.mjs): the hub, its embedded broker, the model builder
 * and the simulated fleet come up, the banner says where to look, the addresses it prints answer, the
 * README's model path runs from classes to a deploy the simulated devices load (over the demo fleet's
 * sshd, restarted by their supervisor), and Ctrl-C (SIGTERM here) stops everything, the restarted
 * devices too. Its fleet lives in a folder of the test's own (LOOKOUT_DEV_DIR) and every
 * port is picked by the system, so it runs beside a developer's own `npm start`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

  it("keeps the hub's log lines for GET /debug/log/tail (the terminal shows only warnings)", async () => {
    const r = await fetch(`${hubUrl}/debug/log/tail?lines=50`);
    const body = (await r.json()) as { lines: unknown[] };
    assert.equal(r.status, 200, JSON.stringify(body));
    assert.ok(body.lines.length > 0, 'the hub logged its start at info');
  });

  it("reads a device's log over the demo fleet's SSH, from the device's own root (GET /debug/shadow/<id>/logs)", async () => {
    const r = await fetch(`${hubUrl}/debug/shadow/sim-cam-1/logs?lines=20`);
    const body = (await r.json()) as { device_id: string; file: string; lines: string[] };
    assert.equal(r.status, 200, JSON.stringify(body));
    assert.deepEqual([body.device_id, body.file], ['sim-cam-1', 'lookout-edge.log']);
    assert.ok(Array.isArray(body.lines));
  });

  it('the contract check it prints under "Try:" passes as printed (with the operator\'s bus credentials)', async () => {
    const command = /^ {2}(env \$\(node bin\/lookout\.js bus-credentials .*verify-contract .*)$/m.exec(output)?.[1];
    assert.ok(command, output);
    const run = spawn('bash', ['-c', command], { cwd: packageRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    run.stdout.on('data', (b: Buffer) => (said += b.toString()));
    run.stderr.on('data', (b: Buffer) => (said += b.toString()));
    const code = await new Promise<number | null>((r) => run.once('exit', r));
    assert.equal(code, 0, said);
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

  it("walks the README's path: classes, the demo dataset, a test-recipe training, a package, a canary-first deploy the restarted devices load", async () => {
    // The README's requests, as written there (its localhost:8788 is this run's hub, its .lookout-dev this run's folder).
    const post = async (path: string, body: unknown) => {
      const r = await fetch(`${hubUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.status, body: await r.json() };
    };
    const get = async (path: string) => await (await fetch(`${hubUrl}${path}`)).json();
    const until = async <T>(what: string, read: () => Promise<T | undefined>, ms: number): Promise<T> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const v = await read();
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms\n${output.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    };
    assert.match(output, /^ {2}deploys +over the fleet's SSH/m, output);
    const dataset = /^ {2}demo dataset +(\S+)/m.exec(output)?.[1] ?? '';
    assert.equal(dataset, join(dir, 'builder', 'imports', 'demo'));

    assert.ok((await post('/api/ontology', { classes: ['person'] })).status < 300);
    assert.ok([200, 201].includes((await post('/api/ontology/compile', {})).status));
    assert.equal((await post('/api/datasets', { name: 'demo', format: 'yolo', uri: dataset })).status, 202);
    const imported = await until(
      'the demo dataset imported',
      async () => {
        const d = await get('/api/datasets/demo');
        return d.state === 'IMPORTING' ? undefined : d;
      },
      60_000,
    );
    assert.equal(imported.state, 'READY', JSON.stringify(imported.reason));
    assert.equal(imported.class_counts.person.frames, 30);

    const launched = await post('/api/pipeline/launch', { epochs: 3, batch_size: 8, recipe: 'test-double', gcs_dataset: dataset });
    assert.equal(launched.status, 202, JSON.stringify(launched.body));
    const trained = await until(
      'the training settled',
      async () => {
        const j = await get(`/api/pipeline/jobs/${launched.body.id}`);
        return ['TRAINING_COMPLETE', 'FAILED'].includes(j.state) ? j : undefined;
      },
      120_000,
    );
    assert.equal(trained.state, 'TRAINING_COMPLETE', trained.reason);
    const pkg = await post('/api/packages', { train_job_id: trained.id });
    assert.equal(pkg.body.version, 'v1', JSON.stringify(pkg.body));

    const deploy = await post('/api/pipeline/deploy', { package_id: 'v1', devices: ['sim-cam-1', 'sim-cam-2'], soak_s: 10 });
    assert.equal(deploy.status, 202, JSON.stringify(deploy.body));
    const deployed = await until(
      'the deploy settled',
      async () => {
        const j = await get(`/api/pipeline/jobs/${deploy.body.id}`);
        return ['DEPLOYED', 'FAILED'].includes(j.state) ? j : undefined;
      },
      240_000,
    );
    assert.equal(deployed.state, 'DEPLOYED', `${deployed.reason}\n${JSON.stringify(await get(`/api/pipeline/jobs/${deploy.body.id}/logs`))}`);
    // Each device was restarted by the deploy (its service command) and its running detector reports the package.
    for (const device of ['sim-cam-1', 'sim-cam-2']) {
      const status = await post(`/tools/call?target=${device}`, { tool: 'get_rfdetr_status', arguments: {} });
      assert.equal(status.body.result?.package_version, 'v1', JSON.stringify(status.body));
      assert.equal(status.body.result?.backend, 'onnx');
    }
    const active = (await get('/api/deployments')).deployments.filter((d: { state: string }) => d.state === 'active');
    assert.deepEqual(active.map((d: { device: string; role: string }) => `${d.device} ${d.role}`).sort(), ['sim-cam-1 canary', 'sim-cam-2 fleet']);
  });

  it('stops everything on SIGTERM (Ctrl-C), exiting 0', async () => {
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output.slice(-2000));
    // The devices' runtimes, the ones the deploy restarted among them, are gone with it.
    for (const name of readdirSync(join(dir, 'run'))) {
      const pid = Number(readFileSync(join(dir, 'run', name), 'utf8'));
      assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `${name}: ${pid} still runs`);
    }
  });
});
