/**
 * fleet-provision's steps as POST /fleet/remediate runs them on a device the hub provisioned
 * (FLEET_PROVISION.reapplyLayer and availability), over a real sshd whose scratch folder stands in for
 * the device's filesystem: the layer's shipped env written again where it was changed, nothing written
 * when it is as wanted, the hub's own SSH key and pinned host key used, typed errors for a device the
 * hub has no address of, and the reasons a remedy is left manual (no fleet CA, no credentials).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LookoutError } from '../../../core/src/index.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { ProvisionRecords } from '../../../hub/plugins/fleet-provision/src/provision-records.js';
import { STEP_NAMES, type Step } from '../../../hub/plugins/fleet-provision/src/provision-schemas.js';
import { Provisioner, type ProvisionerOptions } from '../../../hub/plugins/fleet-provision/src/provisioner.js';
import type { RegistryFileEditor } from '../../../hub/plugins/fleet-provision/src/registry-entry.js';
import type { DeviceRegistry } from '../../../hub/plugins/registry/src/service.js';
import { KnownHosts, SshCredentials } from '../../../lib/ssh/index.js';
import { startSshd, type Sshd } from '../../support/sshd.js';

const ID = 'cam-reapply';

describe("fleet-provision's layer step re-run for a remedy over a real sshd", () => {
  let dir: string;
  let root: string;
  let sshd: Sshd;
  let records: ProvisionRecords;
  const steps: Step[] = [];
  const layerFile = () => join(root, 'data', 'config', 'edge_v3_layer.env');
  const mirrorFile = () => join(root, 'app-storage', 'config', 'edge_v3_layer.env');
  const shipped = () => readFile(join(packageRoot(), 'configs', 'layers', 'layer0_baseline.env'), 'utf8');

  const provisioner = (o: Partial<ProvisionerOptions> = {}) =>
    new Provisioner({
      fleetSecret: 'reapply-test-fleet-secret-0123456789',
      fleetCa: () => Promise.reject(new LookoutError('fleet-provision.fleet_ca_unavailable', "no fleet CA to sign the device's certificate: none in /nowhere")),
      hubCredentials: SshCredentials.load({ keyFile: sshd.clientKeyPath }),
      credentialsOf: () => SshCredentials.load({ keyFile: sshd.clientKeyPath }),
      knownHosts: new KnownHosts(join(dir, 'known_hosts')),
      acceptNew: false,
      connectTimeoutMs: 10_000,
      commandTimeoutMs: 10_000,
      defaultMqttUrl: 'mqtt://127.0.0.1:1883',
      helloTimeoutMs: 1000,
      helloPollMs: 50,
      startCommand: '',
      // No device says hello here (no start command): the registry is asked for no one.
      registry: { get: () => undefined, list: () => [], path: join(dir, 'registry.json') } as unknown as DeviceRegistry,
      registryFile: {} as RegistryFileEditor,
      readiness: undefined,
      records,
      now: () => Date.now(),
      onStep: (_id, step) => steps.push(step),
      ...o,
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-reapply-'));
    root = join(dir, 'device-root');
    await mkdir(root);
    sshd = await startSshd();
    await writeFile(join(dir, 'known_hosts'), `${sshd.knownHostsLine}\n`);
    records = new ProvisionRecords();
    const at = new Date().toISOString();
    records.put({
      device_id: ID,
      host: sshd.host,
      port: sshd.port,
      user: sshd.user,
      layer: 'layer0',
      root,
      mqtt_url: 'mqtt://127.0.0.1:1883',
      state: 'provisioned',
      steps: STEP_NAMES.map((name) => ({ name, status: 'done', detail: null, at })),
      pushed_at: at,
      grade: null,
      updated_at: at,
    });
  });

  after(async () => {
    await sshd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes the layer env where it differs, with the hub’s key and pinned host key; again, it writes nothing', async () => {
    const p = provisioner();
    assert.deepEqual(await p.availability(ID, 'layer'), { ok: true, via: `${sshd.user}@${sshd.host}:${sshd.port} (root ${root})` });
    const first = await p.reapplyLayer(ID, null, new AbortController().signal);
    assert.deepEqual([first.changed, first.layer], [true, 'layer0']);
    assert.equal(await readFile(layerFile(), 'utf8'), await shipped());
    assert.equal(await readFile(mirrorFile(), 'utf8'), await shipped());
    assert.equal(records.get(ID)!.steps.find((s) => s.name === 'layer_env')?.status, 'done');

    // An operator's edit of the durable file is taken back; the mirror, as wanted, is left alone.
    await writeFile(layerFile(), 'EDGE_V3_LAYER=layer0\nBROKEN=1\n');
    const mirrorMtime = (await stat(mirrorFile())).mtimeMs;
    const second = await p.reapplyLayer(ID, 'layer0');
    assert.equal(second.changed, true);
    assert.equal(second.detail, 'written: /data/config/edge_v3_layer.env');
    assert.equal(await readFile(layerFile(), 'utf8'), await shipped());
    assert.equal((await stat(mirrorFile())).mtimeMs, mirrorMtime);

    const third = await p.reapplyLayer(ID, 'layer0');
    assert.equal(third.changed, false);
    assert.deepEqual(
      steps.map((s) => s.status),
      ['done', 'done', 'unchanged'],
    );
  });

  it('says why a remedy is left manual, and refuses a device it has no address of', async () => {
    const cert = await provisioner().availability(ID, 'certificate');
    assert.equal(cert.ok, false);
    assert.match((cert as { reason: string }).reason, /no fleet CA/);
    const noCredentials = await provisioner({ hubCredentials: SshCredentials.load({}) }).availability(ID, 'layer');
    assert.deepEqual(noCredentials, { ok: false, reason: 'the hub has no SSH credentials (DEVICE_PASSWORD or LOOKOUT_SSH_KEY_FILE)' });
    const stranger = await provisioner().availability('cam-stranger', 'layer');
    assert.equal(stranger.ok, false);
    await assert.rejects(provisioner().reapplyLayer('cam-stranger', 'layer0'), (e: LookoutError) => e.code === 'target_unknown');
    await assert.rejects(provisioner().renewCertificate(ID), (e: LookoutError) => e.code === 'fleet-provision.fleet_ca_unavailable');
  });
});
