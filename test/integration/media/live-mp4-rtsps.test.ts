/**
 * The hub's live view reads a camera that announces RTSPS over RTSPS, verified as the camera's other
 * TLS surfaces are (the fleet CA only, the certificate its hello announced pinned): real lookout-edge
 * processes with RTSPS on, a real hub with the fleet CA in its data dir. A camera whose certificate
 * another CA issued is refused with device_tls_mismatch, not read in clear.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { provisionTestFleetCerts } from '../../support/fleet-certs.js';
import { api, testHub, waitFor } from '../../support/hub-helpers.js';

const USER = 'viewer';
const PASSWORD = 'live-rtsps-secret-7';

describe('live view over RTSPS', () => {
  let scratch: string;
  let hub: RunningHub;
  const devices: DeviceProcess[] = [];

  const camera = (deviceId: string, dataDir: string) =>
    startDeviceProcess({
      deviceId,
      dataDir,
      image: join(packageRoot(), 'test', 'fixtures', 'images', 'rtsp-camera.json'),
      mqtt: hub.brokerUrl,
      env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', ONVIF_USER: USER, ONVIF_PASSWORD: PASSWORD, RTSPS: 'on' },
    });

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'lookout-live-rtsps-'));
    const hubDir = join(scratch, 'hub');
    await provisionTestFleetCerts(join(scratch, 'ca'), {
      devices: [{ id: 'cam-good', dataRoot: join(scratch, 'good'), ips: ['127.0.0.1'] }],
      hubDataDir: hubDir,
    });
    // cam-foreign's certificate names it but another CA issued it.
    await provisionTestFleetCerts(join(scratch, 'other-ca'), { devices: [{ id: 'cam-foreign', dataRoot: join(scratch, 'foreign'), ips: ['127.0.0.1'] }] });
    hub = await testHub({ dataDir: hubDir, env: { LOOKOUT_LIVE_RTSP_USER: USER, LOOKOUT_LIVE_RTSP_PASSWORD: PASSWORD, READINESS_START_DELAY_MS: '600000' } });
    devices.push(await camera('cam-good', join(scratch, 'good')), await camera('cam-foreign', join(scratch, 'foreign')));
    for (const d of devices) assert.ok(typeof d.ready.ports.rtsps === 'number', JSON.stringify(d.ready.ports));
    await waitFor(
      'both cameras registered with their rtsps port',
      async () => {
        const r = await api(hub.url, '/fleet/registry');
        return (r.body.shadows ?? []).filter((d: any) => typeof d.ports?.rtsps === 'number').length === 2;
      },
      30_000,
    );
  });

  after(async () => {
    for (const d of devices) await d.stop();
    await hub?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('plays the camera over RTSPS: fragmented MP4 from the hub', async () => {
    const controller = new AbortController();
    const answer = await fetch(`${hub.url}/stream/live/mp4?target=cam-good`, { signal: controller.signal });
    if (answer.status !== 200) assert.fail(`${answer.status}: ${await answer.text()}`);
    const reader = answer.body!.getReader();
    let bytes = Buffer.alloc(0);
    while (bytes.length < 2048) {
      const { value, done } = await reader.read();
      if (done) break;
      bytes = Buffer.concat([bytes, Buffer.from(value)]);
    }
    controller.abort();
    assert.equal(bytes.subarray(4, 8).toString('latin1'), 'ftyp');
    assert.ok(bytes.includes(Buffer.from('moov')), 'an init segment');
  });

  it('refuses a camera whose RTSPS certificate another CA issued: 502 device_tls_mismatch', async () => {
    // Read with a deadline: were it played (a 200), the stream would never end.
    const r = await api(hub.url, '/stream/live/mp4?target=cam-foreign', { signal: AbortSignal.timeout(15_000) });
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error.code, 'device_tls_mismatch');
    assert.equal(r.body.error.details.reason, 'untrusted_ca');
  });
});
