/**
 * POST /fleet/provision-shadow end to end: a real hub (embedded broker with fleet authentication,
 * the readiness and a2a plugins, the fleet CA of `lookout certs`), a real sshd whose scratch folder
 * stands in for the new device's filesystem (the body's `root`), and a real `lookout-edge` started
 * from the env the hub pushed, which must authenticate to the broker with the pushed credentials
 * to say hello. Provisioning is interrupted mid-way (a folder where the mesh key goes), resumed,
 * stopped again at the hello (no device yet), resumed once the device runs, graded, then called
 * again and found changed in nothing; typed errors for a changed host key, refused credentials
 * and an unreachable device; no secret in any answer or the ring; undo takes it back.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseEnv } from '../../../core/src/layers/env-file.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { deviceToolToken, fleetMeshKey, busPassword } from '../../../lib/auth/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { provisionTestFleetCerts } from '../../support/fleet-certs.js';
import { freePort } from '../../support/free-port.js';
import { api, testHub, TEST_FLEET_SECRET } from '../../support/hub-helpers.js';
import { generateKeyPair, startSshd, type Sshd } from '../../support/sshd.js';

const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'mesh-camera.json');
const ID = 'cam-provisioned-1';

interface Step {
  name: string;
  status: string;
  detail: string | null;
}
const statusOf = (steps: Step[]) => Object.fromEntries(steps.map((s) => [s.name, s.status]));

describe('POST /fleet/provision-shadow with a real sshd and device', () => {
  let dir: string;
  let root: string;
  let sshd: Sshd;
  let hub: RunningHub;
  let device: DeviceProcess | undefined;
  let privateKey: string;
  const answers: string[] = [];

  const provision = async (extra: Record<string, unknown> = {}) => {
    const r = await api(hub.url, '/fleet/provision-shadow', {
      json: {
        device_id: ID,
        host: sshd.host,
        port: sshd.port,
        user: sshd.user,
        auth: { method: 'key', private_key: privateKey },
        host_key: sshd.hostPublicKey,
        layer: 'layer0',
        root,
        hello_timeout_s: 2,
        ...extra,
      },
    });
    answers.push(r.text);
    return r;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-provision-'));
    root = join(dir, 'device-root');
    await mkdir(root);
    const caDir = join(dir, 'ca');
    await provisionTestFleetCerts(caDir, { hubDataDir: join(dir, 'hub') });
    sshd = await startSshd();
    privateKey = await readFile(sshd.clientKeyPath, 'utf8');
    const set = await loadHubPluginSet();
    hub = await testHub({
      dataDir: join(dir, 'hub'),
      anonymousBroker: false,
      plugins: set.plugins.filter((p) => p.name !== 'device-ssh'),
      essential: set.essential,
      toolTimeoutMs: 4000,
      env: {
        LOOKOUT_FLEET_CA_DIR: caDir,
        LOOKOUT_SSH_KNOWN_HOSTS: join(dir, 'known_hosts'),
        LOOKOUT_PROVISION_START_COMMAND: '',
        READINESS_INTERVAL_MS: '3600000',
        READINESS_CHECK_TIMEOUT_MS: '6000',
      },
    });
  });

  after(async () => {
    await device?.stop();
    await hub?.close();
    await sshd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('stops at the step that fails (a folder where the mesh key goes), with the done steps recorded and no temp file left', async () => {
    await mkdir(join(root, 'data', 'config', 'mesh.key'), { recursive: true });
    const r = await provision();
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error.code, 'ssh_failed');
    assert.equal(r.body.error.details.step, 'mesh_key');
    const steps = statusOf(r.body.error.details.steps);
    assert.deepEqual(
      [steps.connect, steps.fleet_ca, steps.peer_certificate, steps.mesh_key, steps.device_env, steps.hello],
      ['done', 'done', 'done', 'failed', 'pending', 'pending'],
    );
    const config = join(root, 'data', 'config');
    assert.deepEqual((await readdir(config)).sort(), ['fleet_ca.crt', 'mesh.key', 'shadow_peer.crt', 'shadow_peer.key']);
    assert.equal((await stat(join(config, 'shadow_peer.key'))).mode & 0o777, 0o600);
    const cert = new X509Certificate(await readFile(join(config, 'shadow_peer.crt')));
    assert.ok(cert.checkIssued(new X509Certificate(await readFile(join(config, 'fleet_ca.crt')))));
    assert.match(cert.subject, new RegExp(`CN=${ID}`));
    const listed = await api(hub.url, '/fleet/provision-shadow');
    assert.equal(listed.body.provisions[0].state, 'failed');
  });

  it('resumes where it stopped: the done steps find nothing to do, the rest run, and it waits for the hello (typed timeout)', async () => {
    await rmdir(join(root, 'data', 'config', 'mesh.key'));
    const r = await provision();
    assert.equal(r.status, 504, r.text);
    assert.equal(r.body.error.code, 'fleet-provision.hello_timeout');
    const steps = statusOf(r.body.error.details.steps);
    assert.deepEqual(steps, {
      connect: 'unchanged',
      fleet_ca: 'unchanged',
      peer_certificate: 'unchanged',
      mesh_key: 'done',
      device_env: 'done',
      layer_env: 'done',
      registry: 'done',
      start: 'skipped',
      hello: 'failed',
      grade: 'pending',
    });
    for (const secret of ['data/config/mesh.key', 'etc/lookout/edge.env']) assert.equal((await stat(join(root, secret))).mode & 0o777, 0o600, secret);
    const registry = JSON.parse(await readFile(join(dir, 'hub', 'registry.json'), 'utf8'));
    assert.deepEqual(registry.devices, [
      {
        device_id: ID,
        ips: ['127.0.0.1'],
        ssh_port: sshd.port,
        ...(sshd.user === 'root' ? {} : { ssh_user: sshd.user }),
        recordings_root: join(root, 'data', 'recordings'),
      },
    ]);
  });

  it('grades the device started from the pushed env once it says hello (its bus credentials authenticate)', async () => {
    const env = parseEnv(await readFile(join(root, 'etc', 'lookout', 'edge.env'), 'utf8'));
    const args = env.LOOKOUT_EDGE_ARGS.split(' ');
    const arg = (flag: string) => args[args.indexOf(flag) + 1];
    assert.equal(arg('--device-id'), ID);
    device = await startDeviceProcess({
      deviceId: arg('--device-id'),
      mqtt: arg('--mqtt'),
      image: IMAGE,
      dataDir: root,
      extraArgs: ['--mesh-port', '0', '--sidecar-port', '0'],
      env: { LOOKOUT_MQTT_USERNAME: env.LOOKOUT_MQTT_USERNAME, LOOKOUT_MQTT_PASSWORD: env.LOOKOUT_MQTT_PASSWORD, LOOKOUT_TOOL_TOKEN: env.LOOKOUT_TOOL_TOKEN },
      readyTimeoutMs: 30_000,
    });
    const r = await provision({ hello_timeout_s: 60 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.resumed, true);
    assert.equal(r.body.changed, false, 'every file was there as wanted');
    assert.equal(statusOf(r.body.steps).hello, 'done');
    assert.equal(statusOf(r.body.steps).grade, 'done');
    assert.equal(r.body.grade.grade, 'ready', `${r.body.grade.reason}\n${device.logs().slice(-2000)}`);
    const readiness = await api(hub.url, '/fleet/readiness');
    assert.equal(readiness.body.devices[ID].grade, 'ready');
    assert.equal(readiness.body.devices[ID].modules.device_identity_fp.grade, 'ready');
  });

  it('is idempotent: called again, it changes nothing and says so', async () => {
    const files = [
      'data/config/shadow_peer.key',
      'data/config/shadow_peer.crt',
      'data/config/mesh.key',
      'etc/lookout/edge.env',
      'data/config/edge_v3_layer.env',
    ];
    const before = await Promise.all(files.map(async (f) => (await stat(join(root, f))).mtimeMs));
    const registryBefore = await readFile(join(dir, 'hub', 'registry.json'), 'utf8');
    const r = await provision({ hello_timeout_s: 60 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.changed, false);
    assert.equal(r.body.resumed, false);
    for (const s of r.body.steps as Step[]) {
      if (s.name === 'hello' || s.name === 'grade') assert.equal(s.status, 'done', s.name);
      else if (s.name === 'start') assert.equal(s.status, 'skipped');
      else assert.equal(s.status, 'unchanged', `${s.name}: ${s.detail}`);
    }
    assert.deepEqual(await Promise.all(files.map(async (f) => (await stat(join(root, f))).mtimeMs)), before);
    assert.equal(await readFile(join(dir, 'hub', 'registry.json'), 'utf8'), registryBefore);
    const listed = await api(hub.url, '/fleet/provision-shadow');
    assert.equal(listed.body.provisions[0].state, 'provisioned');
  });

  it('answers typed errors: another host key than the pinned one, refused credentials, nothing listening, a bad body', async () => {
    const other = await generateKeyPair(dir, 'other_host_key');
    const changed = await provision({ host_key: other.publicKey });
    assert.equal(changed.status, 502, changed.text);
    assert.equal(changed.body.error.code, 'ssh_host_key_changed');
    const refused = await provision({ auth: { method: 'password', password: 'not-the-password-9f3' } });
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.body.error.code, 'ssh_auth_failed');
    const port = await freePort('127.0.0.1');
    const unreachable = await provision({ device_id: 'cam-nowhere', port, host_key: undefined });
    assert.equal(unreachable.status, 502, unreachable.text);
    assert.equal(unreachable.body.error.code, 'device_unreachable');
    for (const bad of [{ device_id: 'a/b' }, { port: 70000 }, { root: 'relative' }, { auth: { method: 'password' } }, { layer: 'layer9' }]) {
      const r = await provision(bad);
      assert.ok(r.status >= 400 && r.status < 500, `${JSON.stringify(bad)}: ${r.status} ${r.text}`);
      assert.equal(typeof r.body.error.code, 'string');
    }
  });

  it('puts no secret in any answer or the debug ring', async () => {
    const ring = await api(hub.url, '/debug/events?limit=1000');
    assert.ok((ring.body.events as { kind: string }[]).filter((e) => e.kind === 'provision').length >= 10, 'the steps are in the ring');
    const secrets = [
      busPassword(TEST_FLEET_SECRET, ID),
      deviceToolToken(TEST_FLEET_SECRET, ID),
      fleetMeshKey(TEST_FLEET_SECRET),
      'not-the-password-9f3',
      privateKey.split('\n')[1],
      (await readFile(join(root, 'data', 'config', 'shadow_peer.key'), 'utf8')).split('\n')[1],
    ];
    for (const text of [...answers, ring.text, (await api(hub.url, '/fleet/provision-shadow')).text]) {
      for (const s of secrets) assert.ok(!text.includes(s), `a secret in: ${text.slice(0, 200)}`);
    }
  });

  it('undoes it: the pushed files, the registry entry and the record are gone', async () => {
    await device?.stop();
    device = undefined;
    const r = await provision({ undo: true });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.state, 'undone');
    assert.equal(r.body.changed, true);
    const left = await readdir(join(root, 'data', 'config'));
    for (const f of ['fleet_ca.crt', 'shadow_peer.crt', 'shadow_peer.key', 'mesh.key', 'edge_v3_layer.env']) assert.ok(!left.includes(f), f);
    await assert.rejects(stat(join(root, 'etc', 'lookout', 'edge.env')));
    await assert.rejects(stat(join(root, 'app-storage', 'config', 'edge_v3_layer.env')));
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'hub', 'registry.json'), 'utf8')).devices, []);
    const records = (await api(hub.url, '/fleet/provision-shadow')).body.provisions as { device_id: string }[];
    assert.deepEqual(
      records.map((p) => p.device_id),
      ['cam-nowhere'],
      'only the unreachable one (its failed connect) is left',
    );
    const again = await provision({ undo: true });
    assert.equal(again.body.changed, false);
  });
});
