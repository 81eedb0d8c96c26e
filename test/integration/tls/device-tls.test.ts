/**
 * Hub → device over TLS (issue 32, item 3), real sockets on 127.0.0.1: devices whose tool server
 * serves HTTPS with their certificate (`--tool-tls`: on loopback HTTPS is asked for; beyond it, it
 * is the default) announce `tls: ["tools"]` and their fingerprint in hello; the hub verifies the
 * certificate against the fleet CA of its data dir, wants it to name the device, and pins the
 * fingerprint the device announced. A device of another CA, one presenting another device's
 * certificate of the same CA, and an endpoint presenting a certificate other than the announced one
 * are refused with device_tls_mismatch (502), which readiness shows for that device. A certificate
 * renewed on disk is served and announced after SIGHUP, and the hub pins the new one.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importPlugin } from '../../../core/src/images/load-image.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { deviceTlsPaths } from '../../../lib/tls/tls-paths.js';
import { startDevice, type DeviceHandle } from '../../../edge/src/device-runtime.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { provisionTestFleetCerts } from '../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { ToolRegistry } from '../../../core/src/tools/tool-registry.js';
import { startToolServer } from '../../../edge/src/tool-server.js';
import { api, callTool, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const PLUGINS = ['die-temp', 'identity', 'system-health', 'status'];

describe('hub → device over TLS, pinned to the fleet CA and the announced certificate', () => {
  let scratch: ScratchDir;
  let hub: RunningHub;
  const devices: DeviceHandle[] = [];

  const device = async (deviceId: string, dataDir: string): Promise<DeviceHandle> => {
    const image = { name: 'tls-camera', role: 'camera', plugins: await Promise.all(PLUGINS.map((n) => importPlugin(n, packageRoot()))) };
    const d = await startDevice({
      deviceId,
      image,
      layer: 'layer0',
      source: 'sim',
      dataDir,
      mqttUrl: hub.brokerUrl,
      toolPort: 0,
      toolTls: { tls: true },
      // A certificate that is not there is a test mistake, not something to generate.
      env: { IDENTITY_CERT_GENERATE: '0' },
      logger: createLogger({ level: process.env.LOOKOUT_LOG_LEVEL ?? 'silent' }),
    });
    devices.push(d);
    return d;
  };
  const shadow = async (id: string) =>
    ((await api(hub.url, '/fleet/registry')).body.shadows as { device_id: string; tool_url: string | null }[]).find((s) => s.device_id === id);
  const registered = (id: string) => waitFor(`${id}'s hello`, async () => (await shadow(id))?.tool_url?.startsWith('https://') === true);

  before(async () => {
    scratch = await scratchDir('lookout-device-tls-');
    const root = (id: string) => join(scratch.dir, id);
    await provisionTestFleetCerts(join(scratch.dir, 'ca'), {
      devices: ['cam-a', 'cam-b'].map((id) => ({ id, dataRoot: root(id), ips: ['127.0.0.1'] })),
      hubDataDir: root('hub'),
    });
    // Another fleet's CA issued cam-f's certificate: valid, naming cam-f, not ours.
    await provisionTestFleetCerts(join(scratch.dir, 'foreign-ca'), { devices: [{ id: 'cam-f', dataRoot: root('cam-f'), ips: ['127.0.0.1'] }] });
    // cam-x holds cam-b's certificate and key (same CA, valid): it announces that certificate's fingerprint honestly.
    await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-x', dataRoot: root('cam-x'), ips: ['127.0.0.1'] }] });
    for (const f of ['certPath', 'keyPath'] as const) copyFileSync(deviceTlsPaths(root('cam-b'))[f], deviceTlsPaths(root('cam-x'))[f]);
    hub = await testHub({
      dataDir: root('hub'),
      host: '127.0.0.1',
      toolTimeoutMs: 5000,
      env: { READINESS_START_DELAY_MS: '600000', READINESS_RECHECK_ON_CHANGE: '0' },
    });
    for (const id of ['cam-a', 'cam-f', 'cam-x']) await device(id, root(id));
    for (const id of ['cam-a', 'cam-f', 'cam-x']) await registered(id);
  });

  after(async () => {
    for (const d of devices) await d.stop();
    await hub?.close();
    await scratch?.cleanup();
  });

  it('a device serving its own fleet certificate answers a tool call through the hub over https', async () => {
    const a = devices[0];
    assert.match(a.toolUrl!, /^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.match((await shadow('cam-a'))!.tool_url!, /^https:/);
    const r = await callTool(hub.url, 'cam-a', 'get_device_identity');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.result.device_id, 'cam-a');
    // Kept alive: a second call goes on the same pooled connection.
    assert.equal((await callTool(hub.url, 'cam-a', 'get_device_identity')).status, 200);
  });

  it('a device whose certificate another CA issued is refused: 502 device_tls_mismatch, untrusted_ca', async () => {
    const r = await callTool(hub.url, 'cam-f', 'get_device_identity');
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error.code, 'device_tls_mismatch');
    assert.equal(r.body.error.details.reason, 'untrusted_ca');
  });

  it("a device presenting another device's certificate of the same CA is refused (it names cam-b), and readiness shows it", async () => {
    const r = await callTool(hub.url, 'cam-x', 'get_device_identity');
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error.code, 'device_tls_mismatch');
    assert.equal(r.body.error.details.reason, 'name_mismatch');
    const v = await api(hub.url, '/fleet/validate?target=cam-x', { method: 'POST' });
    assert.equal(v.status, 200, v.text);
    assert.match(v.text, /device_tls_mismatch/);
  });

  it('an endpoint presenting another valid certificate for the same device id, not the one announced, is refused (fingerprint pinned)', async () => {
    // cam-a's traffic led to an impostor holding a second certificate the fleet CA issued for cam-a
    // (an old or leaked one): right CA, right name, not the fingerprint cam-a announced.
    const impostorRoot = join(scratch.dir, 'impostor');
    await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-a', dataRoot: impostorRoot, ips: ['127.0.0.1'] }] });
    const impostor = await startToolServer({
      tools: new ToolRegistry(),
      logger: createLogger({ level: 'silent' }),
      port: 0,
      tls: { ...deviceTlsPaths(impostorRoot), reloadOnSighup: false },
    });
    const bus = await mqttClient(hub.brokerUrl);
    try {
      const announced = new X509Certificate(readFileSync(deviceTlsPaths(join(scratch.dir, 'cam-a')).certPath)).fingerprint256;
      await publish(bus, 'devices/cam-a/hello', { ...msg.hello('cam-a', ['127.0.0.1'], impostor.port), tls: ['tools'], cert_fingerprint: announced });
      const refused = await waitFor('the call to the impostor refused', async () => {
        const r = await callTool(hub.url, 'cam-a', 'get_device_identity');
        return r.status === 502 ? r : undefined;
      });
      assert.equal(refused.body.error.code, 'device_tls_mismatch', refused.text);
      assert.equal(refused.body.error.details.reason, 'fingerprint_mismatch');
      assert.equal(refused.body.error.details.expected_fingerprint, announced);
      assert.notEqual(refused.body.error.details.presented_fingerprint, announced);
    } finally {
      await endClient(bus);
      await impostor.close();
    }
  });

  it('a certificate renewed on the device and SIGHUP: the tool server serves it, identity announces it, the hub pins the new one', async () => {
    const root = join(scratch.dir, 'cam-a');
    await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-a', dataRoot: join(scratch.dir, 'cam-a2'), ips: ['127.0.0.1'] }] });
    for (const f of ['certPath', 'keyPath'] as const) copyFileSync(deviceTlsPaths(join(scratch.dir, 'cam-a2'))[f], deviceTlsPaths(root)[f]);
    const renewed = new X509Certificate(readFileSync(deviceTlsPaths(root).certPath)).fingerprint256;
    process.kill(process.pid, 'SIGHUP');
    const port = Number(new URL(devices[0].toolUrl!).port);
    await waitFor('the tool server serving the renewed certificate', async () => (await servedFingerprint(port)) === renewed);
    const answer = await waitFor('a call through the hub on the renewed certificate', async () => {
      const r = await callTool(hub.url, 'cam-a', 'get_device_identity');
      return r.status === 200 && r.body.result.cert_fingerprint === renewed ? r : undefined;
    });
    assert.equal(answer.body.result.device_id, 'cam-a');
  });
});

/** The fingerprint of the certificate a TLS server on 127.0.0.1 presents (not verified: only looked at). */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.once('error', reject);
  });
}
