/**
 * get_live_status against running camera, encode and rtsp plugins (real ffmpeg encoder, real RTSP
 * server on 127.0.0.1): the encoder's size and rate, the newest keyframe, one raw RTSP viewer
 * counted while it plays and gone once it leaves; the one-shot modes answer with no server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import cameraPlugin from '../../../../plugins/camera/src/index.js';
import encodePlugin from '../../../../plugins/encode/src/index.js';
import rtspPlugin, { LiveStatusResultSchema, type LiveStatusResult } from '../../../../plugins/rtsp/src/index.js';
import { RawRtspViewer } from './raw-rtsp-client.js';

/** Polls `check` every 100 ms until it answers something, or fails naming what it waited for. */
async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await check();
    if (got !== undefined && got !== false) return got;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function run(env: Record<string, string>, oneShot = false) {
  const dataDir = await mkdtemp(join(tmpdir(), 'lookout-rtsp-status-'));
  const runtime = await loadPlugins({
    plugins: [cameraPlugin, encodePlugin, rtspPlugin],
    runtime: { kind: 'device', id: 'cam-rtsp-status', dataDir, layer: 'layer0', device: { source: 'sim', oneShot } },
    bus: new MemoryBus(),
    env: { ENCODE_RESOLUTION: '160x120', ENCODE_FPS: '4', ENCODE_GOP: '4', LIVE_PORT: '0', ...env },
    logger: createLogger({ level: 'silent' }),
  });
  const status = async (): Promise<LiveStatusResult> => LiveStatusResultSchema.parse(await runtime.tools.call('get_live_status', {}));
  return {
    runtime,
    status,
    async stop() {
      await runtime.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

test('get_live_status: the encoder’s size and rate, keyframes, one RTSP viewer while it plays', async () => {
  const d = await run({});
  let viewer: RawRtspViewer | undefined;
  try {
    const decl = d.runtime.tools.list().find((t) => t.decl.name === 'get_live_status');
    assert.ok(decl, 'declared');
    assert.equal(decl.decl.readOnly, true);
    assert.equal(decl.decl.idempotent, true);

    const first = await d.status();
    assert.equal(first.codec, 'H265');
    assert.equal(first.width, 160);
    assert.equal(first.height, 120);
    assert.equal(first.fps, 4);
    assert.equal(first.gop, 4);
    assert.equal(first.viewers, 0);
    assert.deepEqual(first.sessions, { tcp: 0, udp: 0 });
    const port = d.runtime.ports.rtsp;
    assert.equal(first.rtsp.port, port);
    assert.deepEqual(first.rtsp.paths, { h265: '/preview', h264: '/preview_h264' });
    assert.equal(first.h264_available, true);

    const up = await until(
      async () => {
        const s = await d.status();
        return s.stream_up && s.last_keyframe_at ? s : undefined;
      },
      'a keyframe',
      20_000,
    );
    assert.ok(Date.now() - Date.parse(up.last_keyframe_at!) < 60_000, up.last_keyframe_at!);
    assert.equal(up.encoder.running, true);

    viewer = await RawRtspViewer.open(port);
    await viewer.play(`rtsp://127.0.0.1:${port}/preview`);
    const watching = await d.status();
    assert.equal(watching.viewers, 1);
    assert.deepEqual(watching.sessions, { tcp: 1, udp: 0 });
    await until(() => (viewer!.rtpBytes > 0 ? true : undefined), 'RTP to the viewer', 10_000);
    // The newest keyframe moves on while it watches (GOP 4 at 4 fps: one a second).
    await until(async () => ((await d.status()).last_keyframe_at! > up.last_keyframe_at! ? true : undefined), 'a newer keyframe', 10_000);
    const later = await d.status();
    assert.ok(later.encoder.frames > up.encoder.frames, `${later.encoder.frames} > ${up.encoder.frames}`);

    viewer.close();
    await until(async () => ((await d.status()).viewers === 0 ? true : undefined), 'the viewer gone', 10_000);
    assert.deepEqual((await d.status()).sessions, { tcp: 0, udp: 0 });
  } finally {
    viewer?.close();
    await d.stop();
  }
});

test('get_live_status in a one-shot mode: no server, no viewers, the encoder not running', async () => {
  const d = await run({}, true);
  try {
    const s = await d.status();
    assert.equal(s.stream_up, false);
    assert.equal(s.viewers, 0);
    assert.equal(s.rtsp.port, null);
    assert.equal(s.h264_available, false);
    assert.equal(s.last_keyframe_at, null);
    assert.equal(s.encoder.running, false);
  } finally {
    await d.stop();
  }
});
