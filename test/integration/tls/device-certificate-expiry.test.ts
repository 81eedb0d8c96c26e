/**
 * Readiness and the devices' certificates (issue 32, item 4), real parts on 127.0.0.1: a hub with
 * its embedded broker and devices started by the edge runtime with the identity plugin, whose
 * certificates the fleet CA issued back in time. Identity announces its certificate's end in hello
 * (`cert_not_after`); the hub's readiness warns for one ending within 30 days (the device's and the
 * fleet's warnings, the grade untouched: it still works), fails device_identity_fp for one that has
 * ended (clients refuse its TLS surfaces), and a certificate renewed with `lookout certs` and
 * announced after SIGHUP clears both.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importPlugin } from '../../../core/src/images/load-image.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { provisionFleetCertificates } from '../../../lib/tls/provision-fleet.js';
import { deviceTlsPaths } from '../../../lib/tls/tls-paths.js';
import { startDevice, type DeviceHandle } from '../../../edge/src/device-runtime.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { api, testHub, waitFor } from '../../support/hub-helpers.js';

const PLUGINS = ['die-temp', 'identity', 'system-health', 'status'];
const DAY = 86_400_000;
const IDS = ['cam-fine', 'cam-soon', 'cam-gone'];

describe("readiness warns 30 days before a device's certificate ends and fails it once ended", () => {
  let scratch: ScratchDir;
  let hub: RunningHub;
  const devices: DeviceHandle[] = [];
  const root = (id: string) => join(scratch.dir, id);
  const caDir = () => join(scratch.dir, 'ca');
  const notAfterOf = (id: string) => new Date(new X509Certificate(readFileSync(deviceTlsPaths(root(id)).certPath)).validTo).toISOString();
  const announced = (id: string) =>
    waitFor(`${id}'s hello with its certificate's end in the registry`, async () => {
      const shadows = (await api(hub.url, '/fleet/registry')).body.shadows as { device_id: string; cert_not_after?: string }[];
      return shadows.find((s) => s.device_id === id)?.cert_not_after === notAfterOf(id) ? true : undefined;
    });
  const validate = async () => {
    const r = await api(hub.url, '/fleet/validate', { method: 'POST' });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };

  before(async () => {
    scratch = await scratchDir('lookout-device-cert-expiry-');
    // Device certificates are issued for 730 days: 732 days ago has ended two days ago, 710 days ago ends in 19 days.
    await provisionFleetCertificates({
      caDir: caDir(),
      devices: [{ deviceId: 'cam-gone', dataRoot: root('cam-gone') }],
      now: new Date(Date.now() - 732 * DAY),
    });
    await provisionFleetCertificates({
      caDir: caDir(),
      devices: [{ deviceId: 'cam-soon', dataRoot: root('cam-soon') }],
      now: new Date(Date.now() - 710 * DAY),
    });
    await provisionFleetCertificates({ caDir: caDir(), devices: [{ deviceId: 'cam-fine', dataRoot: root('cam-fine') }], hubDataDir: root('hub') });
    hub = await testHub({
      dataDir: root('hub'),
      host: '127.0.0.1',
      toolTimeoutMs: 5000,
      env: { READINESS_START_DELAY_MS: '600000', READINESS_RECHECK_ON_CHANGE: '0' },
    });
    for (const id of IDS) {
      const image = { name: 'cert-camera', role: 'camera', plugins: await Promise.all(PLUGINS.map((n) => importPlugin(n, packageRoot()))) };
      devices.push(
        await startDevice({
          deviceId: id,
          image,
          layer: 'layer0',
          source: 'sim',
          dataDir: root(id),
          mqttUrl: hub.brokerUrl,
          toolPort: 0,
          env: { IDENTITY_CERT_GENERATE: '0' },
          logger: createLogger({ level: process.env.LOOKOUT_LOG_LEVEL ?? 'silent' }),
        }),
      );
    }
    for (const id of IDS) await announced(id);
  });

  after(async () => {
    for (const d of devices) await d.stop();
    await hub?.close();
    await scratch?.cleanup();
  });

  it('names the device and its days left in the warnings without lowering its grade; an ended one fails device_identity_fp', async () => {
    const checked = await validate();
    const soon = checked.devices['cam-soon'];
    const fine = checked.devices['cam-fine'];
    const gone = checked.devices['cam-gone'];
    const soonWarning = `cam-soon device certificate expires in 19 days (${notAfterOf('cam-soon')}): renew it with lookout certs`;
    assert.deepEqual(soon.warnings, [soonWarning]);
    assert.equal(fine.warnings, undefined);
    // Still works: its identity module is what the certificate-less-of-trouble device's is, and so is its grade.
    assert.equal(soon.modules.device_identity_fp.grade, 'ready', soon.modules.device_identity_fp.evidence.reason);
    assert.equal(soon.modules.device_identity_fp.evidence.value.cert_days_left, 19);
    assert.equal(soon.grade, fine.grade);
    assert.equal(fine.modules.device_identity_fp.grade, 'ready');

    assert.equal(gone.modules.device_identity_fp.grade, 'not_ready');
    assert.match(
      gone.modules.device_identity_fp.evidence.reason,
      /^cam-gone device certificate expired on .*: its TLS surfaces are refused; renew it with lookout certs$/,
    );
    assert.equal(gone.grade, 'not_ready');
    assert.match(gone.reason, /device_identity_fp \(cam-gone device certificate expired on/);

    const grade = await api(hub.url, '/fleet/grade');
    assert.equal(grade.status, 200, grade.text);
    const warnings = grade.body.warnings as string[];
    assert.ok(warnings.includes(soonWarning), JSON.stringify(warnings));
    assert.ok(
      warnings.some((w) => w.startsWith(`cam-gone device certificate expired on ${notAfterOf('cam-gone')}`)),
      JSON.stringify(warnings),
    );
    assert.ok(!warnings.some((w) => w.startsWith('cam-fine')), JSON.stringify(warnings));
  });

  it('a certificate renewed with lookout certs and announced after SIGHUP clears the warning and the failure', async () => {
    const before = { soon: notAfterOf('cam-soon'), gone: notAfterOf('cam-gone') };
    // What `lookout certs` does: renews what ends within 30 days (both), keeps cam-fine's.
    await provisionFleetCertificates({ caDir: caDir(), devices: ['cam-soon', 'cam-gone'].map((id) => ({ deviceId: id, dataRoot: root(id) })) });
    assert.notEqual(notAfterOf('cam-soon'), before.soon);
    assert.notEqual(notAfterOf('cam-gone'), before.gone);
    process.kill(process.pid, 'SIGHUP');
    for (const id of ['cam-soon', 'cam-gone']) await announced(id);
    const checked = await validate();
    for (const id of ['cam-soon', 'cam-gone']) {
      const d = checked.devices[id];
      assert.equal(d.warnings, undefined, id);
      assert.equal(d.modules.device_identity_fp.grade, 'ready', d.modules.device_identity_fp.evidence.reason);
      assert.ok(d.modules.device_identity_fp.evidence.value.cert_days_left >= 729, id);
    }
    assert.equal(checked.devices['cam-gone'].grade, checked.devices['cam-fine'].grade);
    const grade = await api(hub.url, '/fleet/grade');
    assert.ok(!(grade.body.warnings as string[]).some((w) => w.includes('device certificate')), JSON.stringify(grade.body.warnings));
  });
});
