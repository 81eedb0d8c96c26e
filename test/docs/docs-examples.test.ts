/**
 * Every code example of README.md and docs/*.md is run (markdown-examples.ts says how they are
 * marked): a plugin is loaded by the real core loader from the image the page shows and its tool is
 * called; `lookout` commands run against temporary data dirs; the A2A examples (openssl, the Node
 * client, curl) are signed and sent to a real hub, and the answers the pages show are checked against
 * that hub's OpenAPI. A block run by another test names it; one that needs real infrastructure says
 * why it is not run. A new block without a marker fails here.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { signA2a } from '../../lib/auth/a2a-signature.js';
import { MemoryBus } from '../../core/src/bus/memory-bus.js';
import { LookoutError } from '../../core/src/errors/lookout-error.js';
import { loadImage } from '../../core/src/images/load-image.js';
import { createLogger } from '../../core/src/log/logger.js';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { loadPlugins } from '../../core/src/plugin/loader.js';
import { documentationExamples, findFile, type CodeExample } from './markdown-examples.js';

const root = packageRoot();
const examples = documentationExamples(root);
const EXAMPLE_KEY = 'example-a2a-key-do-not-use';
const HUB_TOKEN = 'docs-examples-hub-token-0123456789';
/** The few blocks that need what a test machine lacks (a fleet, hosts); each says why in its marker. */
const MAX_SKIPPED = 3;

const scratch: string[] = [];
after(async () => {
  await stopHub();
  await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
});

/** A temp dir; `inPackage` puts it under dist/ so that a plugin written there resolves `lookout/core` to this package. */
async function tempDir(inPackage = false): Promise<string> {
  const dir = await mkdtemp(inPackage ? join(root, 'dist', '.docs-example-') : join(tmpdir(), 'lookout-docs-'));
  scratch.push(dir);
  return dir;
}

function example(id: string): CodeExample {
  const found = examples.find((e) => e.marker?.kind === 'run' && e.marker.id === id);
  assert.ok(found, `an example marked "${id}"`);
  return found;
}

/** Runs a shell example with `lookout` on PATH as this checkout's bin/lookout.js. */
let shimDir: Promise<string> | undefined;
function lookoutOnPath(): Promise<string> {
  shimDir ??= (async () => {
    const bin = await tempDir();
    await writeFile(join(bin, 'lookout'), `#!/bin/sh\nexec "${process.execPath}" "${join(root, 'bin', 'lookout.js')}" "$@"\n`);
    await chmod(join(bin, 'lookout'), 0o755);
    return bin;
  })();
  return shimDir;
}

async function sh(script: string, opts: { cwd: string; env?: Record<string, string> }): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = await lookoutOnPath();
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script],
      { cwd: opts.cwd, env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ...opts.env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

// --- one real hub (embedded broker), started by the first example that needs it -------------

let hubProcess: ChildProcess | undefined;
let hubReady: Promise<{ url: string }> | undefined;

function hub(): Promise<{ url: string }> {
  hubReady ??= (async () => {
    const dataDir = await tempDir();
    const child = spawn(
      process.execPath,
      [join(root, 'bin', 'lookout-hub.js'), '--host', '127.0.0.1', '--port', '0', '--broker-port', '0', '--data-dir', dataDir, '--json'],
      {
        env: { ...process.env, LOOKOUT_HUB_TOKEN: HUB_TOKEN, A2A_HMAC_KEY: EXAMPLE_KEY, LOOKOUT_LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    hubProcess = child;
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    return new Promise<{ url: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the hub did not start in 30 s: ${err}`)), 30_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line && out.includes('\n')) {
          clearTimeout(timer);
          resolve(JSON.parse(line) as { url: string });
        }
      });
      child.once('exit', (code) => reject(new Error(`the hub exited with ${code}: ${err}`)));
    });
  })();
  return hubReady;
}

async function stopHub(): Promise<void> {
  const child = hubProcess;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The JSON Schema of a route's 200 answer in the running hub's OpenAPI. */
async function answerSchemaOf(method: string, path: string) {
  const { url } = await hub();
  const res = await fetch(`${url}/openapi.json`, { headers: { authorization: `Bearer ${HUB_TOKEN}` } });
  const openapi = (await res.json()) as Record<string, unknown>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(openapi, 'openapi');
  const pointer = `/paths/${path.replace(/\//g, '~1')}/${method}/responses/200/content/application~1json/schema`;
  const validate = ajv.getSchema(`openapi#${pointer}`);
  assert.ok(validate, `the hub's OpenAPI describes ${method.toUpperCase()} ${path}`);
  return validate;
}

async function sendA2aQuery(url: string, queryString: string, headers: Record<string, string>) {
  const res = await fetch(`${url}/a2a/query?${queryString}`, { method: 'POST', headers });
  return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
}

// --- plugins, loaded by the core loader -----------------------------------------------------

async function runDevice(imagePath: string, call: (tools: { call(name: string, args: unknown): Promise<unknown> }, bus: MemoryBus) => Promise<void>) {
  const image = await loadImage(imagePath);
  const bus = new MemoryBus();
  const rt = await loadPlugins({
    plugins: image.plugins,
    runtime: { kind: 'device', id: 'cam-9', dataDir: await tempDir(), layer: 'layer0', device: { source: 'sim' } },
    bus,
    env: { HELLO_GREETING: 'hi' },
    logger: createLogger({ level: 'silent' }),
  });
  try {
    const down = rt.plugins.filter((p) => p.state !== 'ok').map((p) => `${p.name}: ${p.state} ${p.code ?? ''} ${p.message ?? ''}`);
    assert.deepEqual(down, [], 'every plugin of the image runs');
    await call(rt.tools, bus);
  } finally {
    await rt.stop();
  }
}

let firstPlugin: Promise<void> | undefined;
/** "A first plugin": the plugin at plugins/hello/index.js, the image at images/my-camera.json, as the page lays them out. */
function runFirstPlugin(): Promise<void> {
  firstPlugin ??= (async () => {
    const dir = await tempDir(true);
    await mkdir(join(dir, 'plugins', 'hello'), { recursive: true });
    await mkdir(join(dir, 'images'));
    await writeFile(join(dir, 'plugins', 'hello', 'index.js'), example('plugin-first').body);
    await writeFile(join(dir, 'images', 'my-camera.json'), example('plugin-first-image').body);
    await runDevice(join(dir, 'images', 'my-camera.json'), async (tools, bus) => {
      const answer = (await tools.call('say_hello', { name: 'operator' })) as { greeting: string; die_temp_c: unknown };
      assert.equal(answer.greeting, 'hi, operator');
      assert.equal(typeof answer.die_temp_c, 'number', 'the die-temp service answered');
      assert.ok(bus.published.some((m) => m.topic === 'devices/cam-9/events/hello'));
    });
  })();
  return firstPlugin;
}

const HANDLERS: Record<string, (ex: CodeExample) => Promise<void>> = {
  'plugin-first': () => runFirstPlugin(),
  'plugin-first-image': () => runFirstPlugin(),

  async 'plugin-manifest'(ex) {
    const dir = await tempDir(true);
    await writeFile(join(dir, 'index.js'), ex.body);
    await writeFile(join(dir, 'image.json'), JSON.stringify({ name: 'manifest', plugins: ['die-temp', './index.js'] }));
    await runDevice(join(dir, 'image.json'), async (tools) => {
      const answer = (await tools.call('say_hello', { name: 'operator' })) as { greeting: string; die_temp_c: unknown };
      assert.equal(answer.greeting, 'hi, operator');
      assert.equal(typeof answer.die_temp_c, 'number');
      await assert.rejects(
        tools.call('say_hello', { name: 'nobody' }),
        (e: unknown) => e instanceof LookoutError && e.code === 'hello.name_refused' && e.status === 400,
      );
    });
  },

  async 'plugin-loading-image'(ex) {
    // Its plugin path is relative to the image file: ../examples/hello-plugin/index.js from one level below the root.
    const path = join(root, 'dist', `.docs-example-image-${process.pid}.json`);
    scratch.push(path);
    await writeFile(path, ex.body);
    await runDevice(path, async (tools) => {
      const answer = (await tools.call('say_hello', { name: 'operator' })) as { greeting: string };
      assert.equal(answer.greeting, 'hi, operator');
    });
  },

  async 'a2a-openssl'(ex) {
    const { code, stdout, stderr } = await sh(ex.body, { cwd: await tempDir() });
    assert.equal(code, 0, stderr);
    const expected = signA2a(
      EXAMPLE_KEY,
      { method: 'POST', path: '/a2a/query', query: { q: 'peer_hello', target: 'cam-1' }, body: '' },
      1764000000_000,
      'example-nonce-0001',
    )['X-Lookout-Signature'].slice(3);
    assert.equal(stdout.trim(), expected);
    const shown = /# ([0-9a-f]+)…([0-9a-f]+)/.exec(ex.body);
    assert.ok(shown && expected.startsWith(shown[1]) && expected.endsWith(shown[2]), 'the comment shows the signature it prints');
  },

  async 'a2a-node-client'(ex) {
    const dir = await tempDir();
    const file = join(dir, 'client.mjs');
    await writeFile(file, `${ex.body}\nexport { peerHello };\n`);
    const { peerHello } = (await import(pathToFileURL(file).href)) as {
      peerHello: (hubUrl: string, key: string, target: string) => Promise<{ status: number; body: { error?: { code: string } } }>;
    };
    const { url } = await hub();
    // The hub checks the signature before the target: an unknown target answers 404 only to a valid signature.
    const signed = await peerHello(url, EXAMPLE_KEY, 'cam-1');
    assert.equal(signed.status, 404, JSON.stringify(signed.body));
    assert.equal(signed.body.error?.code, 'target_unknown');
    const forged = await peerHello(url, 'another-key-of-16-chars', 'cam-1');
    assert.equal(forged.status, 401);
    assert.equal(forged.body.error?.code, 'a2a.signature_invalid');
  },

  async 'a2a-sign-curl'(ex) {
    const { url } = await hub();
    assert.match(ex.body, /http:\/\/127\.0\.0\.1:8788/);
    const { code, stdout, stderr } = await sh(ex.body.replace('http://127.0.0.1:8788', url), { cwd: await tempDir(), env: { LOOKOUT_HUB_TOKEN: HUB_TOKEN } });
    assert.equal(code, 0, stderr);
    const signed = JSON.parse(stdout) as { headers: Record<string, string>; query_string: string };
    assert.equal(signed.headers['X-Lookout-Key-Id'], 'a2a-sign');
    assert.equal(signed.query_string, 'q=peer_hello&target=cam-1');
    const sent = await sendA2aQuery(url, signed.query_string, signed.headers);
    assert.equal(sent.body.error?.code, 'target_unknown', 'the signature was accepted');
  },

  async 'a2a-sign-answer'(ex) {
    const validate = await answerSchemaOf('post', '/a2a/sign');
    assert.ok(validate(JSON.parse(ex.body)), JSON.stringify(validate.errors));
  },

  async 'a2a-query-answer'(ex) {
    const validate = await answerSchemaOf('post', '/a2a/query');
    assert.ok(validate(JSON.parse(ex.body)), JSON.stringify(validate.errors));
  },

  async certs(ex) {
    const dir = await tempDir();
    const script = ex.body.replace(/\/mnt\//g, `${dir}/mnt/`);
    const first = await sh(script, { cwd: dir, env: { HOME: dir } });
    assert.equal(first.code, 0, first.stderr);
    const files = ['lookout-ca/ca.crt', 'lookout-ca/ca.key', '.lookout-dev/hub/tls/hub.crt', '.lookout-dev/hub/tls/fleet_ca.crt'];
    for (const cam of ['cam-1', 'cam-2']) files.push(...['shadow_peer.crt', 'shadow_peer.key', 'fleet_ca.crt'].map((f) => `mnt/${cam}/data/config/${f}`));
    for (const f of files) assert.ok(existsSync(join(dir, f)), `${f} written`);
    const cert = await readFile(join(dir, 'mnt/cam-1/data/config/shadow_peer.crt'), 'utf8');
    // "Running it again is safe": what is valid is kept.
    const again = await sh(script, { cwd: dir, env: { HOME: dir } });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await readFile(join(dir, 'mnt/cam-1/data/config/shadow_peer.crt'), 'utf8'), cert);
  },

  async 'prune-recordings'(ex) {
    const dir = await tempDir();
    const recordings = join(dir, 'data', 'recordings');
    await mkdir(recordings, { recursive: true });
    const t0 = Date.parse('2026-01-01T12:00:00Z');
    const chunk = (i: number) => `${new Date(t0 + i * 60_000).toISOString().replace(/[-:]/g, '').replace('.', '')}_${String(i).padStart(6, '0')}.h265`;
    for (let i = 0; i < 33; i++) await writeFile(join(recordings, chunk(i)), 'chunk');
    const count = async () => (await import('node:fs/promises')).readdir(recordings).then((n) => n.filter((x) => x.endsWith('.h265')).length);
    const [dryRun, prune] = ex.body.split('\n').filter((l) => l.trim());
    assert.match(dryRun, /--data-dir \/ /);
    const asHere = (line: string) => line.replace('--data-dir / ', `--data-dir ${dir} `);
    const dry = await sh(asHere(dryRun), { cwd: root });
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(await count(), 33, 'a dry run removes nothing');
    const real = await sh(asHere(prune), { cwd: root });
    assert.equal(real.code, 0, real.stderr);
    assert.equal(await count(), 30, 'keeps exactly 30');
    assert.ok(!existsSync(join(recordings, chunk(0))), 'the oldest went first');
  },

  async 'operator-commands'(ex) {
    // They need a device over SSH (test/integration/ssh/operator-*.test.ts run them against sshd): here each
    // command exists and takes the flags the lines give it.
    const dir = await tempDir();
    for (const line of ex.body.split('\n')) {
      const m = /\blookout ([a-z-]+)(.*)$/.exec(line.replace(/#.*$/, ''));
      if (!m) continue;
      const help = await sh(`lookout ${m[1]} --help`, { cwd: dir });
      assert.equal(help.code, 0, `lookout ${m[1]} --help: ${help.stderr}`);
      for (const flag of m[2].match(/--[a-z-]+/g) ?? []) assert.ok(help.stdout.includes(flag), `lookout ${m[1]} takes ${flag}`);
    }
  },
};

describe("the documentation's code examples", () => {
  it('every one is marked: run here, run by a named test, or not run with a reason', () => {
    assert.ok(examples.length >= 15, `found ${examples.length} examples`);
    const unmarked = examples.filter((e) => !e.marker).map((e) => `${e.file}:${e.line}`);
    assert.deepEqual(unmarked, [], 'examples without an <!-- example: … --> marker');
    const used = new Set<string>();
    for (const e of examples) {
      const m = e.marker!;
      if (m.kind === 'run') {
        assert.ok(HANDLERS[m.id], `${e.file}:${e.line}: no handler "${m.id}"`);
        assert.ok(!used.has(m.id), `${e.file}:${e.line}: "${m.id}" marks two examples`);
        used.add(m.id);
      } else if (m.kind === 'tested-by') {
        const [test] = findFile(join(root, 'test'), m.file);
        assert.ok(test, `${e.file}:${e.line}: ${m.file} exists under test/`);
      }
    }
    assert.deepEqual(
      Object.keys(HANDLERS).filter((id) => !used.has(id)),
      [],
      'handlers no example uses',
    );
    const skipped = examples.filter((e) => e.marker?.kind === 'skip');
    assert.ok(skipped.length <= MAX_SKIPPED, `${skipped.length} examples not run: ${skipped.map((e) => `${e.file}:${e.line}`).join(', ')}`);
  });

  for (const ex of examples) {
    const m = ex.marker;
    if (m?.kind !== 'run' || !HANDLERS[m.id]) continue;
    it(`${ex.file}:${ex.line} (${m.id})`, { timeout: 120_000 }, () => HANDLERS[m.id](ex));
  }
});
