/**
 * POST /fleet/remediate renewing an ended certificate over SSH, with real parts: a hub (embedded
 * broker with fleet authentication, the fleet CA of `lookout certs`, its SSH key and known-hosts
 * file), a real sshd whose scratch folder stands in for the device's filesystem, and a real
 * `lookout-edge` started there from the env POST /fleet/provision-shadow pushed, holding a
 * certificate of the fleet CA that ended two days ago. Without the CA the plan leaves the renewal
 * to the operator and says why; with it the dry run plans it over SSH and changes nothing; the apply
 * writes a new certificate of the fleet CA through fleet-provision's step, the announce makes the
 * device read it, and the regrade finds device_identity_fp ready.
 */
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseEnv } from '../../../core/src/layers/env-file.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { provisionFleetCertificates } from '../../../lib/tls/provision-fleet.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { provisionTestFleetCerts } from '../../support/fleet-certs.js';
import { api, testHub, waitFor } from '../../support/hub-helpers.js';
import { startSshd, type Sshd } from '../../support/sshd.js';

const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'mesh-camera.json');
const ID = 'cam-renew-ssh';
const DAY = 86_400_000;

interface Action {
  remedy: string;
  module: string;
  how: string;
  tool: string | null;
  via: string | null;
  manual: string | null;
  manual_reason: string | null;
  status: string;
  result: any;
  error: { code: string; message: string } | null;
  module_after: string | null;
}
interface Plan {
  dry_run: boolean;
  devices: { device_id: string; actions: Action[]; grade_after: string | null }[];
  summary: Record<string, number>;
}

describe('POST /fleet/remediate renews an ended certificate over SSH (fleet-provision)', () => {
  let dir: string;
  let root: string;
  let caDir: string;
  let sshd: Sshd;
  let hub: RunningHub;
  let device: DeviceProcess | undefined;
  const certPath = () => join(root, 'data', 'config', 'shadow_peer.crt');
  const keyPath = () => join(root, 'data', 'config', 'shadow_peer.key');
  const remediate = async (body: Record<string, unknown>): Promise<Plan> => {
    const r = await api(hub.url, '/fleet/remediate', { method: 'POST', json: body });
    assert.equal(r.status, 200, r.text);
    return r.body as Plan;
  };
  const actionsOf = (plan: Plan) => Object.fromEntries(plan.devices.find((d) => d.device_id === ID)!.actions.map((a) => [a.remedy, a]));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-remediate-ssh-'));
    root = join(dir, 'device-root');
    await mkdir(root);
    caDir = join(dir, 'ca');
    // The fleet CA made 740 days ago (as an older fleet's), the hub's certificates today.
    await provisionFleetCertificates({ caDir, now: new Date(Date.now() - 740 * DAY) });
    await provisionTestFleetCerts(caDir, { hubDataDir: join(dir, 'hub') });
    sshd = await startSshd();
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
        // The remedy connects with the hub's own credentials: a provisioning's auth is never kept.
        LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath,
        LOOKOUT_PROVISION_START_COMMAND: '',
        READINESS_START_DELAY_MS: '600000',
        READINESS_INTERVAL_MS: '3600000',
        READINESS_RECHECK_ON_CHANGE: '0',
        READINESS_CHECK_TIMEOUT_MS: '6000',
        REMEDIATE_SETTLE_MS: '10000',
      },
    });
    // Provisioned by this hub (the host key pinned, the address and root recorded); no device runs yet, so it stops at the hello.
    const provisioned = await api(hub.url, '/fleet/provision-shadow', {
      json: {
        device_id: ID,
        host: sshd.host,
        port: sshd.port,
        user: sshd.user,
        auth: { method: 'key', private_key: await readFile(sshd.clientKeyPath, 'utf8') },
        host_key: sshd.hostPublicKey,
        layer: 'layer0',
        root,
        hello_timeout_s: 1,
      },
    });
    assert.equal(provisioned.status, 504, provisioned.text);
    // Two years on: its certificate (730 days) ended two days ago.
    await provisionFleetCertificates({ caDir, devices: [{ deviceId: ID, dataRoot: root }], force: true, now: new Date(Date.now() - 732 * DAY) });
    assert.ok(new Date(new X509Certificate(await readFile(certPath())).validTo).getTime() < Date.now());

    const env = parseEnv(await readFile(join(root, 'etc', 'lookout', 'edge.env'), 'utf8'));
    const args = env.LOOKOUT_EDGE_ARGS.split(' ');
    device = await startDeviceProcess({
      deviceId: ID,
      mqtt: args[args.indexOf('--mqtt') + 1],
      image: IMAGE,
      dataDir: root,
      extraArgs: ['--mesh-port', '0', '--sidecar-port', '0'],
      env: {
        LOOKOUT_MQTT_USERNAME: env.LOOKOUT_MQTT_USERNAME,
        LOOKOUT_MQTT_PASSWORD: env.LOOKOUT_MQTT_PASSWORD,
        LOOKOUT_TOOL_TOKEN: env.LOOKOUT_TOOL_TOKEN,
        IDENTITY_CERT_GENERATE: '0',
      },
      readyTimeoutMs: 30_000,
    });
    await waitFor(
      'the device in the registry with its ended certificate',
      async () => {
        const shadows = (await api(hub.url, '/fleet/registry')).body.shadows as { device_id: string; cert_not_after?: string }[];
        const end = shadows.find((s) => s.device_id === ID)?.cert_not_after;
        return end && Date.parse(end) < Date.now() ? true : undefined;
      },
      60_000,
    );
  });

  after(async () => {
    await device?.stop();
    await hub?.close();
    await sshd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('without the fleet CA: the renewal is the operator’s step, and the plan says why', async () => {
    await rename(caDir, `${caDir}.away`);
    try {
      const plan = await remediate({ devices: [ID] });
      const renew = actionsOf(plan).renew_certificate;
      assert.equal(renew?.how, 'manual', JSON.stringify(plan));
      assert.match(renew.manual!, /lookout certs .*--device cam-renew-ssh/);
      assert.match(renew.manual_reason!, /fleet CA/);
      assert.equal(renew.via, null);
    } finally {
      await rename(`${caDir}.away`, caDir);
    }
  });

  it('dry run: plans the renewal over SSH and the announce, and changes nothing', async () => {
    const [cert, key, mtime] = [await readFile(certPath(), 'utf8'), await readFile(keyPath(), 'utf8'), (await stat(certPath())).mtimeMs];
    const plan = await remediate({ devices: [ID] });
    assert.equal(plan.dry_run, true);
    const by = actionsOf(plan);
    assert.equal(by.renew_certificate?.how, 'ssh', JSON.stringify(plan));
    assert.equal(by.renew_certificate.via, `${sshd.user}@${sshd.host}:${sshd.port} (root ${root})`);
    assert.deepEqual([by.renew_certificate.manual, by.renew_certificate.manual_reason, by.renew_certificate.status], [null, null, 'planned']);
    assert.deepEqual([by.announce?.tool, by.announce?.module], ['announce_identity', 'device_identity_fp']);
    assert.equal(plan.summary.over_ssh, 1);
    assert.equal(plan.summary.manual, 0);
    assert.deepEqual([await readFile(certPath(), 'utf8'), await readFile(keyPath(), 'utf8'), (await stat(certPath())).mtimeMs], [cert, key, mtime]);
    const readiness = (await api(hub.url, `/fleet/readiness?device=${ID}`)).body.devices[ID];
    assert.equal(readiness.modules.device_identity_fp.grade, 'not_ready');
  });

  it('apply: writes a new certificate of the fleet CA over SSH, the device announces it and device_identity_fp is ready again', async () => {
    const old = new X509Certificate(await readFile(certPath()));
    const applied = await remediate({ devices: [ID], apply: true });
    assert.equal(applied.dry_run, false);
    const by = actionsOf(applied);
    assert.equal(by.renew_certificate.status, 'done', JSON.stringify(by.renew_certificate));
    assert.equal(by.renew_certificate.result.changed, true);
    assert.match(by.renew_certificate.result.detail, /^issued \(the one there: .*\): /);
    assert.equal(by.announce.status, 'done', JSON.stringify(by.announce));
    assert.equal(by.announce.result.certificate_changed, true);

    // On the device: a certificate of the fleet CA for it, valid now, and its key (0600) beside it.
    const cert = new X509Certificate(await readFile(certPath()));
    const ca = new X509Certificate(await readFile(join(caDir, 'ca.crt')));
    assert.notEqual(cert.fingerprint256, old.fingerprint256);
    assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey), 'signed by the fleet CA');
    assert.match(cert.subject, new RegExp(`CN=${ID}`));
    assert.ok(Date.parse(cert.validFrom) <= Date.now() && Date.parse(cert.validTo) > Date.now() + 700 * DAY, `${cert.validFrom} .. ${cert.validTo}`);
    assert.equal(by.announce.result.cert_not_after, new Date(cert.validTo).toISOString());
    const key = await readFile(keyPath(), 'utf8');
    assert.equal((await stat(keyPath())).mode & 0o777, 0o600);
    assert.equal(
      createPublicKey(createPrivateKey(key)).export({ type: 'spki', format: 'der' }).toString('base64'),
      cert.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
      'the key is the certificate’s',
    );

    // Graded again: the identity module is ready, here and in /fleet/readiness.
    assert.equal(by.renew_certificate.module_after, 'ready');
    const readiness = (await api(hub.url, `/fleet/readiness?device=${ID}`)).body.devices[ID];
    assert.equal(readiness.modules.device_identity_fp.grade, 'ready', readiness.modules.device_identity_fp.evidence.reason);

    // Audited: the remediation, and the provisioning step it ran (no key in either).
    const ring = await api(hub.url, `/debug/events?device=${ID}&limit=500`);
    const events = ring.body.events as { kind: string; message: string }[];
    assert.ok(events.some((e) => e.kind === 'remediation' && e.message.startsWith('remediation renew_certificate (device_identity_fp): done')));
    assert.ok(events.some((e) => e.kind === 'provision' && e.message === `provisioning ${ID}: peer_certificate done`));
    assert.ok(!ring.text.includes(key.split('\n')[1]));
    const record = ((await api(hub.url, '/fleet/provision-shadow')).body.provisions as { device_id: string; steps: { name: string; status: string }[] }[]).find(
      (p) => p.device_id === ID,
    )!;
    assert.equal(record.steps.find((s) => s.name === 'peer_certificate')?.status, 'done');
  });

  it('applied again: nothing left to remedy, nothing written', async () => {
    const mtime = (await stat(certPath())).mtimeMs;
    const again = await remediate({ devices: [ID], apply: true });
    assert.deepEqual(actionsOf(again), {});
    assert.equal((await stat(certPath())).mtimeMs, mtime);
  });
});
