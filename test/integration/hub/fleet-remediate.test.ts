/**
 * POST /fleet/remediate with real parts: a hub with its embedded broker and a `lookout-edge` process
 * that has three things wrong: a third-party plugin that failed at start, a recordings volume (a real
 * tmpfs) past STORAGE_CRITICAL_PCT with AUTO_PRUNE off, and a certificate that ended two days ago.
 * The dry run plans the three remedies and changes nothing (no command on the device's cmd topics,
 * every chunk and the certificate where they were, the plugin still failed); the apply restarts the
 * plugin, prunes (the recorder publishing events/automation_log), re-announces the certificate an
 * operator renewed, audits each action in the debug ring, and grades the device again.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import { AutomationLogEventSchema } from '../../../core/src/contracts/index.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { provisionFleetCertificates } from '../../../lib/tls/provision-fleet.js';
import { deviceTlsPaths } from '../../../lib/tls/tls-paths.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, endClient, mqttClient, testHub, waitFor } from '../../support/hub-helpers.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../support/small-filesystem.js';
import { writeChunks } from '../../unit/plugins/recorder/chunk-fixtures.js';

const ID = 'cam-remedy';
const DAY = 86_400_000;
const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'remedy-camera.json');

const usedPct = (dir: string) => {
  const s = statfsSync(dir);
  const used = s.blocks - s.bfree;
  return (used / (used + s.bavail)) * 100;
};

interface Action {
  remedy: string;
  module: string;
  how: string;
  tool: string | null;
  arguments: Record<string, unknown>;
  status: string;
  result: any;
  error: { code: string; message: string } | null;
  module_after: string | null;
  manual: string | null;
}

describe('POST /fleet/remediate on a device with a failed plugin, a full volume and an ended certificate', { skip: cannotMount() }, () => {
  let scratch: ScratchDir;
  let disk: SmallFilesystem | undefined;
  let hub: RunningHub | undefined;
  let device: DeviceProcess | undefined;
  let client: MqttClient | undefined;
  const commands: string[] = [];
  const automation: unknown[] = [];
  let chunks: string[] = [];
  const root = () => join(scratch.dir, 'device');
  const caDir = () => join(scratch.dir, 'ca');
  const certPem = () => readFileSync(deviceTlsPaths(root()).certPath, 'utf8');
  const chunkFiles = () =>
    readdirSync(disk!.dir)
      .filter((n) => n.endsWith('.h265'))
      .sort();
  const remediate = async (body: Record<string, unknown>) => {
    const r = await api(hub!.url, '/fleet/remediate', { method: 'POST', json: body });
    assert.equal(r.status, 200, r.text);
    return r.body as { dry_run: boolean; devices: { device_id: string; grade_before: string; actions: Action[]; grade_after: string | null }[]; summary: any };
  };
  /** Whether the device's newest health (HEALTH_INTERVAL_MS) lists the plugin as failed, as /fleet/health shows it. */
  const failed = async (name: string) => {
    const d = (await api(hub!.url, '/fleet/health')).body.devices[ID] as { plugins?: { failed: { name: string }[] } } | undefined;
    return d?.plugins ? d.plugins.failed.some((p) => p.name === name) : undefined;
  };

  before(async () => {
    scratch = await scratchDir('lookout-remediate-');
    // Device certificates are issued for 730 days: one issued 732 days ago ended two days ago.
    await provisionFleetCertificates({ caDir: caDir(), devices: [{ deviceId: ID, dataRoot: root() }], now: new Date(Date.now() - 732 * DAY) });
    disk = await mountSmallFilesystem({ sizeKiB: 4096, prefix: 'lookout-remediate-rec-' });
    chunks = await writeChunks(disk.dir, 10, { justified: (i) => i < 2, padTo: 160 * 1024 });
    const fd = openSync(join(disk.dir, 'other-data.bin'), 'w');
    try {
      while (usedPct(disk.dir) < 95) writeSync(fd, Buffer.alloc(16 * 1024));
    } finally {
      closeSync(fd);
    }
    hub = await testHub({ env: { READINESS_START_DELAY_MS: '600000', READINESS_RECHECK_ON_CHANGE: '0', REMEDIATE_SETTLE_MS: '10000' } });
    client = await mqttClient(hub.brokerUrl, { clientId: 'remediate-watch' });
    client.on('message', (topic, payload) => {
      if (topic.startsWith(`devices/${ID}/cmd/`)) commands.push(topic);
      if (topic === `devices/${ID}/events/automation_log`) automation.push(JSON.parse(payload.toString()));
    });
    await new Promise<void>((resolve, reject) =>
      client!.subscribe([`devices/${ID}/cmd/#`, `devices/${ID}/events/automation_log`], { qos: 1 }, (err) => (err ? reject(err) : resolve())),
    );
    device = await startDeviceProcess({
      deviceId: ID,
      mqtt: hub.brokerUrl,
      dataDir: root(),
      image: IMAGE,
      layer: 'layer2',
      env: {
        IDENTITY_CERT_GENERATE: '0',
        HEALTH_INTERVAL_MS: '500',
        RECORDINGS_DIR: disk.dir,
        AUTO_PRUNE: '0',
        KEEP_CHUNKS: '3',
        STORAGE_WARN_PCT: '80',
        STORAGE_CRITICAL_PCT: '90',
        STORAGE_CHECK_MS: '300',
      },
    });
    await waitFor(
      'the device in the registry with its ended certificate',
      async () => {
        const shadows = (await api(hub!.url, '/fleet/registry')).body.shadows as { device_id: string; cert_not_after?: string }[];
        return shadows.find((s) => s.device_id === ID)?.cert_not_after ? true : undefined;
      },
      60_000,
    );
    await waitFor('flaky failed in /fleet/health', async () => ((await failed('flaky')) === true ? true : undefined), 60_000);
  });

  after(async () => {
    if (client) await endClient(client);
    await device?.stop().catch(() => undefined);
    await hub?.close().catch(() => undefined);
    await disk?.unmount();
    await scratch?.cleanup();
  });

  it('dry run (the default): plans the restart, the prune and the certificate, and changes nothing', async () => {
    // The operator has fixed what made the plugin fail: only a restart is missing now.
    writeFileSync(join(root(), 'flaky-ready'), 'yes');
    const cert = certPem();
    const plan = await remediate({ devices: [ID] });
    assert.equal(plan.dry_run, true);
    const d = plan.devices.find((x) => x.device_id === ID)!;
    assert.equal(d.grade_before, 'not_ready');
    const by = Object.fromEntries(d.actions.map((a) => [a.remedy, a]));
    assert.deepEqual(
      [by.restart_plugin?.tool, by.restart_plugin?.arguments, by.restart_plugin?.module],
      ['restart_plugin', { name: 'flaky' }, 'mcp_health'],
      JSON.stringify(d.actions),
    );
    assert.deepEqual([by.prune?.tool, by.prune?.module], ['prune_recordings', 'recorder'], JSON.stringify(d.actions));
    assert.equal(by.renew_certificate?.how, 'manual');
    assert.match(by.renew_certificate.manual!, /lookout certs .*--device cam-remedy/);
    assert.deepEqual([by.announce?.tool, by.announce?.module], ['announce_identity', 'device_identity_fp']);
    for (const a of d.actions) assert.deepEqual([a.status, a.module_after, a.result], ['planned', null, null]);
    assert.equal(d.grade_after, null);

    // Nothing happened: no command reached the device, the chunks and the certificate are where they were.
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(commands, []);
    assert.deepEqual(chunkFiles(), chunks);
    assert.equal(certPem(), cert);
    assert.equal(await failed('flaky'), true);
    assert.deepEqual(automation, []);
  });

  it('narrows to the modules asked for', async () => {
    const plan = await remediate({ devices: [ID], modules: ['recorder'] });
    assert.deepEqual(
      plan.devices[0].actions.map((a) => a.remedy),
      ['prune'],
    );
  });

  it('refuses a device the hub does not know, and a misspelt field', async () => {
    const unknown = await api(hub!.url, '/fleet/remediate', { method: 'POST', json: { devices: ['cam-nobody'] } });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.code, 'target_unknown');
    const bad = await api(hub!.url, '/fleet/remediate', { method: 'POST', json: { aply: true } });
    assert.equal(bad.status, 400, bad.text);
    assert.deepEqual(commands, []);
  });

  it('apply: restarts the plugin, prunes, re-announces the renewed certificate, audits each action and grades again', async () => {
    // What `lookout certs` does for an ended certificate: issues it again in place (the manual step).
    await provisionFleetCertificates({ caDir: caDir(), devices: [{ deviceId: ID, dataRoot: root() }] });
    const renewedEnd = new Date(new X509Certificate(certPem()).validTo).toISOString();
    const applied = await remediate({ devices: [ID], apply: true });
    assert.equal(applied.dry_run, false);
    const d = applied.devices[0];
    const by = Object.fromEntries(d.actions.map((a) => [a.remedy, a]));
    assert.equal(by.restart_plugin.status, 'done', JSON.stringify(by.restart_plugin));
    assert.equal(by.restart_plugin.result.state, 'ok');
    assert.equal(by.prune.status, 'done', JSON.stringify(by.prune));
    assert.equal(by.prune.result.still_critical, false);
    assert.ok(by.prune.result.removed.length >= 7, JSON.stringify(by.prune.result));
    assert.equal(by.renew_certificate.status, 'manual');
    assert.equal(by.announce.status, 'done', JSON.stringify(by.announce));
    assert.deepEqual([by.announce.result.certificate_changed, by.announce.result.cert_not_after], [true, renewedEnd]);

    // Graded again: the certificate and the storage are fixed, and so is what the failed plugin kept down.
    assert.equal(by.announce.module_after, 'ready');
    assert.notEqual(by.prune.module_after, 'not_ready', JSON.stringify(d));
    const readiness = (await api(hub!.url, `/fleet/readiness?device=${ID}`)).body.devices[ID];
    assert.notEqual(readiness.modules.recorder.evidence.value.storage_health, 'CRITICAL');
    assert.equal(readiness.modules.device_identity_fp.grade, 'ready', readiness.modules.device_identity_fp.evidence.reason);
    assert.ok(!String(readiness.modules.mcp_health.evidence.reason ?? '').includes('flaky'), readiness.modules.mcp_health.evidence.reason);
    await waitFor('flaky no longer failed in /fleet/health', async () => ((await failed('flaky')) === false ? true : undefined));

    // The commands went on the cmd topic; the restart and the prune each told the fleet on events/automation_log.
    assert.deepEqual([...new Set(commands)], [`devices/${ID}/cmd/tool`]);
    const logs = await waitFor('the restart and the prune on events/automation_log', () =>
      automation.length >= 2 ? automation.map((l) => AutomationLogEventSchema.parse(l)) : undefined,
    );
    const byAction = Object.fromEntries(logs.map((l) => [l.action, l]));
    assert.deepEqual([byAction.prune?.plugin, byAction.prune?.trigger, byAction.prune?.outcome], ['recorder', 'requested', 'ok'], JSON.stringify(logs));
    assert.deepEqual(
      [byAction.plugin_restart?.plugin, byAction.plugin_restart?.trigger, byAction.plugin_restart?.outcome, byAction.plugin_restart?.details?.dependents],
      ['flaky', 'restart_plugin', 'ok', ['flaky-dependent']],
      JSON.stringify(logs),
    );
    assert.equal(chunkFiles().filter((n) => chunks.includes(n)).length, 3);

    // Each action audited in the debug ring, where an operator finds it by its kind.
    const ring = await api(hub!.url, `/debug/events?device=${ID}&kind=remediation&limit=200`);
    assert.equal(ring.status, 200, ring.text);
    const audited = (ring.body.events as { kind: string; message: string }[]).map((e) => e.message);
    for (const remedy of ['restart_plugin', 'prune', 'renew_certificate', 'announce'])
      assert.ok(
        audited.some((m) => m.startsWith(`remediation ${remedy} `)),
        `${remedy} in ${JSON.stringify(audited)}`,
      );
  });
});
