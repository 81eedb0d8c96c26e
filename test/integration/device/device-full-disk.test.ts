/**
 * A full disk never silences a device. A real `lookout-edge` process whose data root is a tmpfs
 * filled to the last byte starts, connects to the hub's broker, keeps publishing and says why it is
 * unwell: storage CRITICAL in health and /fleet/health, identity `degraded` (its key generated but
 * held in memory only) in status, health and get_device_identity. Once space returns, the same key
 * and certificate are written, and nothing half-written or temporary is ever left on the disk.
 * Before: the device exited at start (identity failed with ENOSPC, and identity is essential).
 */
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../support/small-filesystem.js';
import { api, callTool, testHub, waitFor } from '../../support/hub-helpers.js';

const ID = 'cam-full';

interface PluginReport {
  name: string;
  state: string;
  message?: string;
}

describe('a device whose data filesystem is full', { skip: cannotMount() }, () => {
  let disk: SmallFilesystem | undefined;
  let hub: RunningHub | undefined;
  let device: DeviceProcess | undefined;

  before(async () => {
    disk = await mountSmallFilesystem({ sizeKiB: 256, prefix: 'lookout-full-disk-' });
    disk.fill();
    hub = await testHub();
    device = await startDeviceProcess({
      deviceId: ID,
      mqtt: hub.brokerUrl,
      dataDir: disk.dir,
      layer: 'layer2',
      env: { HEALTH_INTERVAL_MS: '200', IDENTITY_SAVE_RETRY_MS: '200' },
    });
  });

  // Always unmount, whatever failed before: each step is tried on its own.
  after(async () => {
    await device?.stop().catch(() => undefined);
    await hub?.close().catch(() => undefined);
    await disk?.unmount();
  });

  const latest = async () => (await api(hub!.url, '/fleet/mqtt/latest')).body.devices[ID];
  const identityOf = (plugins: PluginReport[] | undefined) => plugins?.find((p) => p.name === 'identity');
  const configDir = () => join(disk!.dir, 'data', 'config');
  const filesIn = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

  it('connects and keeps publishing, with storage CRITICAL and identity degraded saying why', async () => {
    const entry = await waitFor('status, health and telemetry of the full device in the hub', async () => {
      const e = await latest();
      return e?.status?.state === 'online' && e.health && e.payload ? e : undefined;
    });
    const inStatus = identityOf(entry.status.plugins);
    assert.equal(inStatus?.state, 'degraded', JSON.stringify(entry.status.plugins));
    assert.match(inStatus.message!, /not yet durable.*ENOSPC/);

    const health = await waitFor('a health message with storage CRITICAL', async () => {
      const h = (await latest())?.health;
      return h?.storage_health === 'CRITICAL' ? h : undefined;
    });
    assert.equal(health.status, 'critical');
    assert.equal(health.storage.used_pct, 100);
    assert.equal(identityOf(health.plugins)?.state, 'degraded');

    const fleet = (await api(hub!.url, `/fleet/health?device=${ID}`)).body.devices[ID];
    assert.equal(fleet.presence, 'online');
    assert.equal(fleet.storage_health, 'CRITICAL');
    assert.equal(fleet.readiness.grade, 'not_ready');

    // Telemetry keeps coming: two different messages some time apart.
    const first = (await latest()).payload.timestamp as string;
    await waitFor('newer telemetry', async () => (await latest()).payload.timestamp !== first);

    // Nothing of the key stays on disk: no half-written file, no temp file. A retry (every 200 ms
    // here) has its temp file for the moment between its open and the ENOSPC that removes it, so a
    // listing on a loaded machine may catch one: what must hold is that none is left.
    await waitFor('no key file left in the config folder', async () => filesIn(configDir()).filter((f) => f.includes('shadow_peer')).length === 0);
  });

  it('answers get_device_identity through the hub: a fingerprint, key not durable and why, no key material', async () => {
    const answer = await callTool(hub!.url, ID, 'get_device_identity');
    assert.equal(answer.status, 200, answer.text);
    const identity = answer.body.result;
    assert.match(identity.cert_fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.equal(identity.key_durable, false);
    assert.match(identity.key_durable_reason, /shadow_peer\.key.*ENOSPC/);
    assert.doesNotMatch(answer.text, /PRIVATE KEY/);
  });

  it('writes the same key and certificate once space returns, and reports OK again', async () => {
    const before = (await callTool(hub!.url, ID, 'get_device_identity')).body.result;
    disk!.free();
    const keyPath = join(configDir(), 'shadow_peer.key');
    const certPath = join(configDir(), 'shadow_peer.crt');
    await waitFor('the certificate on disk', () => existsSync(certPath));

    const cert = new X509Certificate(readFileSync(certPath));
    assert.equal(cert.fingerprint256, before.cert_fingerprint, 'the key in memory is the one written, not a new one');
    assert.equal(cert.checkPrivateKey(createPrivateKey(readFileSync(keyPath))), true);
    assert.equal(statSync(keyPath).mode & 0o777, 0o600);
    assert.deepEqual(filesIn(configDir()).sort(), ['shadow_peer.crt', 'shadow_peer.key']);

    const after = await waitFor('get_device_identity with a durable key', async () => {
      const r = (await callTool(hub!.url, ID, 'get_device_identity')).body.result;
      return r?.key_durable === true ? r : undefined;
    });
    assert.equal(after.key_durable_reason, null);
    assert.equal(after.cert_fingerprint, before.cert_fingerprint);

    const health = await waitFor('a health message with storage OK and identity ok', async () => {
      const h = (await latest())?.health;
      return h?.storage_health === 'OK' && identityOf(h.plugins)?.state === 'ok' ? h : undefined;
    });
    assert.equal(health.cert_fingerprint_present, true);
    await waitFor('/fleet/health storage OK', async () => (await api(hub!.url, `/fleet/health?device=${ID}`)).body.devices[ID]?.storage_health === 'OK');
    assert.doesNotMatch(device!.logs(), /PRIVATE KEY/);
  });
});
