import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { LiveJpegResultSchema } from '../../../core/src/contracts/recording-tools.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { EncodedVideoToken, type EncodedPicture } from '../../../plugins/encode/src/service.js';
import { jpegSize } from '../../../plugins/encode/src/jpeg-size.js';
import { startPluginDevice } from '../../support/plugin-device.js';
import { waitFor } from '../../support/wait-for.js';
import { keyframePositions, probeHevc } from '../../unit/plugins/encode/hevc-probe.js';

let broker: EmbeddedBroker;
before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
});
after(async () => {
  await broker.close();
});

function live(port: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/live.h265' }, resolve);
    req.on('error', reject);
    req.end();
  });
}

test('a device of the encode-camera image streams H.265 live, answers get_live_jpeg, survives its ffmpeg being killed and follows profile changes', async () => {
  const image = JSON.parse(await readFile(join(packageRoot(), 'test', 'fixtures', 'images', 'encode-camera.json'), 'utf8')) as { plugins: string[] };
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: image.plugins,
    layer: 'layer0',
    // Light: the resolution and fps from the overrides, the rest (gop 5) from the persisted profile.
    env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_RESTART_MIN_MS: '300', LIVE_PORT: '0', HEALTH_INTERVAL_MS: '60000' },
    prepare: async (dataDir) => {
      await mkdir(join(dataDir, 'data', 'config'), { recursive: true });
      const profile = { codec: 'H265', resolution: '1920x1080', fps: 15, bitrate_kbps: 300, gop: 5, rate_control: 'VBR' };
      await writeFile(join(dataDir, 'data', 'config', 'camera_profile.json'), JSON.stringify({ profile, updated_at: new Date().toISOString() }));
    },
  });
  const encodeState = () => device.runtime.plugins.find((p) => p.name === 'encode')!;
  let lastPid: number | null = null;
  try {
    assert.equal(encodeState().state, 'ok', encodeState().message);
    const video = device.runtime.service(EncodedVideoToken)!;
    assert.deepEqual([video.codec, video.width, video.height, video.fps, video.gop], ['hevc', 320, 240, 5, 5]);
    const port = device.runtime.ports.live;
    assert.ok(port > 0, 'the live port is announced');
    const pictures: EncodedPicture[] = [];
    video.subscribe((p) => pictures.push(p));

    // The live stream: decodable from its first byte, a keyframe every gop.
    await waitFor(() => video.latestGop().length >= 2, 'a GOP', 15_000);
    const res = await live(port);
    assert.equal(res.statusCode, 200);
    const body: Buffer[] = [];
    res.on('data', (c: Buffer) => body.push(c));
    await sleep(3000);
    const first = await probeHevc(Buffer.concat(body));
    assert.ok(first.length >= 12, `${first.length} frames decoded from 3 s of live stream`);
    assert.deepEqual([first[0].width, first[0].height, first[0].key_frame], [320, 240, 1]);
    const keys = keyframePositions(first);
    for (let i = 1; i < keys.length; i++) assert.equal(keys[i] - keys[i - 1], 5, 'keyframe interval = gop');

    // get_live_jpeg through the device's tool registry (schema-checked arguments).
    const jpeg = LiveJpegResultSchema.parse(await device.runtime.tools.call('get_live_jpeg', { w: 200, q: 70 }));
    const bytes = Buffer.from(jpeg.jpeg_base64, 'base64');
    assert.deepEqual([bytes[0], bytes[1]], [0xff, 0xd8]);
    assert.deepEqual(jpegSize(bytes), { width: 200, height: 150 });
    assert.equal(jpeg.width, 200);
    await assert.rejects(device.runtime.tools.call('get_live_jpeg', { w: 5000 }), (e: { code?: string }) => e.code === 'tool_arguments_invalid');

    // Kill the encoder's ffmpeg (its pid from the plugin): recorded, degraded, restarted; the live client stays.
    const before = video.encoder();
    assert.ok(before.pid !== null);
    process.kill(before.pid, 'SIGKILL');
    await waitFor(() => video.lastExit() !== null, 'the exit to be recorded', 5000);
    assert.match(video.lastExit()!.message, /SIGKILL/);
    await waitFor(() => encodeState().state === 'degraded', 'the plugin to say degraded', 5000);
    assert.match(encodeState().message ?? '', /encoder stopped/);
    await waitFor(() => pictures.some((p) => p.generation === before.generation + 1), 'pictures of the restarted encoder', 15_000);
    await waitFor(() => encodeState().state === 'ok', 'the plugin healthy again', 5000);
    const after = video.encoder();
    assert.equal(after.restarts, 1);
    assert.ok(after.pid !== null && after.pid !== before.pid);
    await sleep(1200);
    res.destroy();
    const whole = await probeHevc(Buffer.concat(body));
    assert.ok(whole.length > first.length + 3, 'the live client received the restarted stream too');

    // A profile change restarts the encoder with the new keyframe interval.
    await device.runtime.tools.call('set_camera_profile', { gop: 10 });
    await waitFor(() => video.gop === 10, 'the new gop', 5000);
    const generation = video.encoder().generation;
    await waitFor(() => pictures.filter((p) => p.generation === generation).length >= 12, 'pictures at gop 10', 15_000);
    const fresh = pictures.filter((p) => p.generation === generation);
    assert.deepEqual(
      fresh.flatMap((p, i) => (p.keyframe ? [i] : [])),
      [0, 10],
    );
    assert.equal(video.encoder().restarts, 1, 'a profile change is not a crash');
    const stats = video.stats();
    assert.ok(stats.frames >= pictures.length && stats.encode_fps > 0 && stats.bitrate_kbps > 0, JSON.stringify(stats));
    lastPid = video.encoder().pid;
  } finally {
    await device.stop();
  }
  // The device's stop ends its ffmpeg.
  assert.ok(lastPid !== null);
  assert.throws(() => process.kill(lastPid, 0), /ESRCH/);
});
