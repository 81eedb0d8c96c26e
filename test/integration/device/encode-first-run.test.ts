import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { EncodedVideoToken, type EncodedPicture } from '../../../plugins/encode/src/service.js';
import { startPluginDevice } from '../../support/plugin-device.js';
import { waitFor } from '../../support/wait-for.js';

let broker: EmbeddedBroker;
before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
});
after(async () => {
  await broker.close();
});

// The RTSP preview asks the encoder for H.264 at its start. Were the encoder started before it, its
// first run (no H.264) would be cut after a fraction of a second and every boot would record a chunk
// that short: the encoder waits for the plugins that use its video, and its first run makes both.
test('a device with the RTSP preview boots into one encoder run that makes H.265 and H.264 from its first picture', async () => {
  const image = JSON.parse(await readFile(join(packageRoot(), 'test', 'fixtures', 'images', 'rtsp-camera.json'), 'utf8')) as { plugins: string[] };
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: image.plugins,
    layer: 'layer0',
    env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', LIVE_PORT: '0', RTSP_PORT: '0', HEALTH_INTERVAL_MS: '60000' },
  });
  try {
    const video = device.runtime.service(EncodedVideoToken)!;
    const h264 = video.h264?.();
    assert.ok(h264, 'the encoder makes H.264 (ffmpeg with libx264)');
    const hevc: EncodedPicture[] = [];
    const avc: EncodedPicture[] = [];
    video.subscribe((p) => hevc.push(p));
    h264.subscribe((p) => avc.push(p));
    await waitFor(() => hevc.length >= 10 && avc.length >= 10, 'two seconds of both outputs', 20_000);
    assert.equal(video.encoder().generation, 1, 'the encoder ran once');
    assert.deepEqual([...new Set([...hevc, ...avc].map((p) => p.generation))], [1], 'both outputs from that run');
  } finally {
    await device.stop();
  }
});
