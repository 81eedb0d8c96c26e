import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { accessUnitsOf } from '../../../lib/media/hevc-annexb.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startDeviceProcess } from '../../support/device-process.js';

let broker: EmbeddedBroker;
before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
});
after(async () => {
  await broker.close();
});

function get(port: number, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/live.h265', headers }, resolve);
    req.on('error', reject);
    req.end();
  });
}

test('lookout-edge with the encode-camera image announces its live port and streams from a keyframe; on loopback it answers only to loopback names', async () => {
  const device = await startDeviceProcess({
    deviceId: 'cam-encode-proc',
    image: join(packageRoot(), 'test', 'fixtures', 'images', 'encode-camera.json'),
    mqtt: broker.url,
    env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', LOOKOUT_TOOL_TOKEN: 'device-tool-token-0123456789' },
  });
  try {
    const port = device.ready.ports.live;
    assert.ok(typeof port === 'number' && port > 0, `ready line ports: ${JSON.stringify(device.ready.ports)}`);
    // The first pictures take a moment: wait until the stream has a GOP.
    let res: IncomingMessage | undefined;
    for (let i = 0; i < 50; i++) {
      res = await get(port);
      if (res.statusCode === 200) break;
      res.resume();
      await sleep(200);
    }
    assert.equal(res!.statusCode, 200);
    const chunks: Buffer[] = [];
    res!.on('data', (c: Buffer) => chunks.push(c));
    // Until three pictures came (a loaded machine encodes slowly), within a generous bound.
    let units = accessUnitsOf(Buffer.concat(chunks));
    for (const until = Date.now() + 15_000; units.length < 3 && Date.now() < until; units = accessUnitsOf(Buffer.concat(chunks))) await sleep(200);
    res!.destroy();
    assert.ok(units.length >= 3 && units[0].keyframe, `${units.length} pictures, the first a keyframe`);

    // LIVE_HOST defaults to 127.0.0.1: a request naming the camera otherwise is a rebinding attempt.
    const stranger = await get(port, { host: 'camera.lan' });
    stranger.resume();
    assert.equal(stranger.statusCode, 403, 'a loopback-only stream answers only to loopback names');
  } finally {
    const exit = await device.stop();
    assert.equal(exit.code, 0, device.logs().slice(-2000));
  }
});
