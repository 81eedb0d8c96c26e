/**
 * The hub's readers of a device's live stream over TLS: the snapshot tail (snapshots) and the live
 * probe (camera-surface) against the encode plugin's own LiveServer serving HTTPS on 127.0.0.1 with
 * a real encoder. The hub trusts the fleet CA only and pins the fingerprint the device announced:
 * the right certificate serves a picture; another CA's certificate, or another device's, is refused
 * with device_tls_mismatch.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { DeviceTlsAgents } from '../../../../../lib/tls/device-agents.js';
import { fleetCaDeviceTls, type DevicePin } from '../../../../../lib/tls/device-pin.js';
import { deviceTlsPaths } from '../../../../../lib/tls/tls-paths.js';
import { surfaceUrls } from '../../../../../hub/plugins/camera-surface/src/surface-urls.js';
import { probeLive } from '../../../../../hub/plugins/camera-surface/src/live-probe.js';
import type { RegisteredDevice } from '../../../../../hub/plugins/registry/src/service.js';
import { LiveTail } from '../../../../../hub/plugins/snapshots/src/live-tail.js';
import { LiveTails } from '../../../../../hub/plugins/snapshots/src/live-tails.js';
import { liveUrl, snapshotFromTail } from '../../../../../hub/plugins/snapshots/src/tail-step.js';
import { loadScenario } from '../../../../../plugins/camera/src/scenario-files.js';
import { SimFrameSource } from '../../../../../plugins/camera/src/sim-frame-source.js';
import { EncodePipeline } from '../../../../../plugins/encode/src/encode-pipeline.js';
import { FfmpegHevcEncoder } from '../../../../../plugins/encode/src/ffmpeg-hevc-encoder.js';
import { LiveServer } from '../../../../../plugins/encode/src/live-server.js';
import { provisionTestFleetCerts } from '../../../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';
import { waitFor } from '../../../../support/wait-for.js';

const signal = () => new AbortController().signal;

describe('the hub reads a device’s live stream over TLS, pinned', () => {
  let scratch: ScratchDir;
  let pipeline: EncodePipeline;
  const servers: LiveServer[] = [];
  const tails: LiveTail[] = [];
  let agents: DeviceTlsAgents;
  /** cam-1 with its fleet certificate; cam-1 with a certificate of another CA; cam-2's fleet certificate. */
  const ports = { right: 0, foreignCa: 0, otherDevice: 0 };
  let pin: DevicePin;

  before(async () => {
    scratch = await scratchDir('lookout-live-tls-hub-');
    const fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), {
      devices: ['cam-1', 'cam-2'].map((id) => ({ id, dataRoot: join(scratch.dir, id) })),
      hubDataDir: join(scratch.dir, 'hub'),
    });
    await provisionTestFleetCerts(join(scratch.dir, 'other-ca'), { devices: [{ id: 'cam-1', dataRoot: join(scratch.dir, 'cam-1-foreign') }] });
    pin = { deviceId: 'cam-1', fingerprint: fleet.device('cam-1').fingerprint };
    agents = new DeviceTlsAgents(fleetCaDeviceTls(fleet.hub().caPath));
    pipeline = new EncodePipeline({
      source: new SimFrameSource(loadScenario('people-crossing').scenario),
      encoder: new FfmpegHevcEncoder({ maxQueuedFrames: 2 }),
      settings: { width: 160, height: 120, fps: 5, gop: 5, bitrateKbps: 200, rateControl: 'VBR' },
      gopMaxBytes: 8 * 1024 * 1024,
      statsWindowMs: 2000,
      restart: { minMs: 200, maxMs: 1000 },
    });
    pipeline.start();
    const serve = async (root: string) => {
      const live = new LiveServer(pipeline, {
        host: '127.0.0.1',
        port: 0,
        maxClients: 4,
        maxBufferBytes: 1024 * 1024,
        guard: () => undefined,
        tls: { ...deviceTlsPaths(join(scratch.dir, root)), reloadOnSighup: false },
      });
      servers.push(live);
      return live.listen();
    };
    ports.right = await serve('cam-1');
    ports.foreignCa = await serve('cam-1-foreign');
    ports.otherDevice = await serve('cam-2');
    await waitFor(() => pipeline.latestGop().length > 0, 'the encoder’s first GOP', 20_000);
  });
  after(async () => {
    for (const t of tails) t.close();
    agents?.close();
    await Promise.all(servers.map((s) => s.close()));
    await pipeline?.stop();
    await scratch?.cleanup();
  });

  const device = (port: number, liveTls = true): RegisteredDevice => ({
    deviceId: 'cam-1',
    ips: ['127.0.0.1'],
    labels: [],
    roles: [],
    ports: { tools: 1, live: port },
    source: 'hello',
    namedInFile: false,
    toolUrl: 'https://127.0.0.1:1/mcp',
    tlsFingerprint: pin.fingerprint,
    ...(liveTls ? { liveTls: true } : {}),
    lastHelloAt: null,
  });
  const tailAt = (url: string): LiveTail => {
    const tail = new LiveTail({
      deviceId: 'cam-1',
      url,
      agent: agents.agentOf(pin),
      fingerprint: pin.fingerprint,
      maxBytes: 4 << 20,
      backoffMinMs: 100,
      backoffMaxMs: 500,
      stallMs: 10_000,
      onWarm: () => undefined,
    });
    tails.push(tail);
    return tail;
  };
  const url = (port: number) => `https://127.0.0.1:${port}/live.h265`;
  const refusedWith = (reason: string) => (err: LookoutError) => {
    assert.equal(err.code, 'device_tls_mismatch');
    assert.equal((err.details as { reason: string }).reason, reason);
    return true;
  };

  it('addresses the live stream over https when the device says live speaks TLS, http otherwise', () => {
    assert.equal(liveUrl(device(ports.right)), url(ports.right));
    assert.equal(surfaceUrls(device(ports.right)).live, url(ports.right));
    assert.equal(liveUrl(device(ports.right, false)), `http://127.0.0.1:${ports.right}/live.h265`);
    assert.equal(surfaceUrls(device(ports.right, false)).live, `http://127.0.0.1:${ports.right}/live.h265`);
  });

  it('snapshot through the tail: the device presenting its announced certificate serves a JPEG', async () => {
    const live = new LiveTails({
      max: 2,
      idleMs: 60_000,
      create: (deviceId, at, fingerprint) => {
        assert.equal(fingerprint, pin.fingerprint);
        return tailAt(at);
      },
    });
    const shot = await snapshotFromTail(
      live,
      { device: device(ports.right), width: 160, quality: 5, signal: signal() },
      { warmTimeoutMs: 20_000, maxAgeMs: 20_000, decodeTimeoutMs: 20_000 },
    );
    assert.equal(shot.source, 'live_tail');
    assert.deepEqual([...shot.jpeg.subarray(0, 2)], [0xff, 0xd8]);
  });

  it('the tail refuses a certificate of another CA (untrusted_ca) and one naming another device (name_mismatch)', async () => {
    // Refused as soon as the handshake fails, long before the warm-up limit.
    await assert.rejects(tailAt(url(ports.foreignCa)).ready(60_000, signal()), refusedWith('untrusted_ca'));
    await assert.rejects(tailAt(url(ports.otherDevice)).ready(60_000, signal()), refusedWith('name_mismatch'));
  });

  it('the live probe: up with the stream’s size over the right certificate, down with device_tls_mismatch otherwise', async () => {
    const agent = agents.agentOf(pin);
    const up = await probeLive(url(ports.right), undefined, 20_000, signal(), agent);
    assert.deepEqual(up, { up: true, codec: 'H265', resolution: '160x120', reason: null });
    const foreign = await probeLive(url(ports.foreignCa), undefined, 20_000, signal(), agent);
    assert.equal(foreign.up, false);
    assert.match(foreign.reason ?? '', /^device_tls_mismatch \(untrusted_ca\)/);
    const other = await probeLive(url(ports.otherDevice), undefined, 20_000, signal(), agent);
    assert.equal(other.up, false);
    assert.match(other.reason ?? '', /^device_tls_mismatch \(name_mismatch\)/);
  });
});
