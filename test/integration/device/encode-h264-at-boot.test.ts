/**
 * A device whose RTSP preview serves H.264 beside H.265 starts its encoder once, with both outputs:
 * the encoder waits for every plugin to have started, so the H.264 the rtsp plugin asks for while it
 * starts is in the first run. Before, the encoder ran 0.2 s, was restarted with its second output,
 * and the recorder kept a 0.2 s chunk of two frames at every boot.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { EncodedVideoToken } from '../../../plugins/encode/src/service.js';
import { startPluginDevice } from '../../support/plugin-device.js';
import { waitFor } from '../../support/wait-for.js';

let broker: EmbeddedBroker;
before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
});
after(async () => {
  await broker.close();
});

test('the encoder of a camera with an H.264 preview runs once from boot, with both outputs', async () => {
  const image = JSON.parse(await readFile(join(packageRoot(), 'test', 'fixtures', 'images', 'rtsp-camera.json'), 'utf8')) as { plugins: string[] };
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: image.plugins,
    layer: 'layer0',
    env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', LIVE_PORT: '0', RTSP_PORT: '0', ONVIF_USER: 'u', ONVIF_PASSWORD: 'p-1234567' },
  });
  try {
    const video = device.runtime.service(EncodedVideoToken)!;
    const h264 = video.h264?.();
    assert.ok(h264, 'the encoder makes H.264');
    let h264Pictures = 0;
    h264.subscribe(() => h264Pictures++);
    await waitFor(() => h264Pictures >= 5, 'H.264 pictures', 15_000);
    assert.equal(video.encoder().generation, 1, 'one encoder run since boot');
    assert.equal(video.encoder().restarts, 0);
  } finally {
    await device.stop();
  }
});
