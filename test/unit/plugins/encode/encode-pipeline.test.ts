import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadScenario } from '../../../../plugins/camera/src/scenario-files.js';
import { SimFrameSource } from '../../../../plugins/camera/src/sim-frame-source.js';
import { EncodePipeline } from '../../../../plugins/encode/src/encode-pipeline.js';
import { FfmpegHevcEncoder } from '../../../../plugins/encode/src/ffmpeg-hevc-encoder.js';
import type { EncodedPicture, EncoderExit } from '../../../../plugins/encode/src/service.js';
import type { EncoderSettings } from '../../../../plugins/encode/src/video-encoder.js';
import { waitFor } from '../../../support/wait-for.js';
import { keyframePositions, probeHevc } from './hevc-probe.js';

// Light on the shared CPU: 320x240 at 5 fps.
const SETTINGS: EncoderSettings = { width: 320, height: 240, fps: 5, gop: 5, bitrateKbps: 300, rateControl: 'VBR' };

function pipeline(options: { program?: string; maxQueuedFrames?: number; restartMinMs?: number; settings?: Partial<EncoderSettings> } = {}) {
  const source = new SimFrameSource(loadScenario('people-crossing').scenario);
  const encoder = new FfmpegHevcEncoder({ program: options.program ?? 'ffmpeg', maxQueuedFrames: options.maxQueuedFrames ?? 2 });
  const health: { state: string; message: string }[] = [];
  const p = new EncodePipeline({
    source,
    encoder,
    settings: { ...SETTINGS, ...options.settings },
    gopMaxBytes: 8 * 1024 * 1024,
    statsWindowMs: 2000,
    restart: { minMs: options.restartMinMs ?? 200, maxMs: 1000 },
    onHealth: (state, message) => health.push({ state, message }),
  });
  const pictures: EncodedPicture[] = [];
  p.subscribe((pic) => pictures.push(pic));
  return { p, encoder, pictures, health };
}

test('frames paced at the fps come out as pictures with a keyframe every gop, capture times and rates', async () => {
  const { p, pictures } = pipeline();
  p.start();
  try {
    // ffmpeg's start takes from 0.1 s to well over a second on a loaded 2-core CI machine: the
    // 3 s of pacing are counted from the first picture out, not from start().
    await waitFor(() => pictures.length >= 1, 'the first picture', 10_000);
    const before = p.stats();
    await sleep(3000);
    const { frames, dropped, encode_fps, bitrate_kbps } = p.stats();
    const paced = frames - before.frames;
    // 3 s at 5 fps: 15 frames, give or take the one or two still inside the encoder and the parser.
    assert.ok(paced >= 11 && paced <= 17, `${paced} pictures in 3 s at 5 fps`);
    assert.equal(frames, pictures.length);
    assert.ok(dropped - before.dropped <= 1, `${dropped - before.dropped} dropped with an idle encoder`);
    assert.ok(encode_fps >= 3.5 && encode_fps <= 6.5, `encode_fps ${encode_fps}`);
    assert.ok(bitrate_kbps > 50, `bitrate_kbps ${bitrate_kbps}`);
    assert.deepEqual(
      pictures.map((q) => q.index),
      pictures.map((_, i) => i),
    );
    assert.ok(pictures[0].keyframe, 'the stream starts on a keyframe');
    for (const q of pictures) assert.equal(q.keyframe, q.index % 5 === 0, `picture ${q.index}: a keyframe every 5`);
    // Frames queued while ffmpeg was still starting may be dropped, leaving a gap before the
    // first pictures: capture times are checked over the paced 3 s, where a gap of n missed
    // frames must be matched by n drops.
    let missed = 0;
    for (let i = before.frames + 1; i < pictures.length; i++) {
      const gap = pictures[i].capturedAtMs - pictures[i - 1].capturedAtMs;
      const slots = Math.round(gap / 200);
      assert.ok(slots >= 1 && Math.abs(gap - slots * 200) <= 60, `capture times a multiple of 200 ms apart (${gap})`);
      missed += slots - 1;
    }
    assert.ok(missed <= dropped - before.dropped, `${missed} frames missing between pictures, ${dropped - before.dropped} dropped`);
    assert.ok(Date.now() - pictures.at(-1)!.capturedAtMs < 1500, 'a picture leaves the encoder soon after its frame was captured');
    const gop = p.latestGop();
    assert.ok(gop.length >= 1 && gop.length <= 5 && gop[0].keyframe);
    const probed = await probeHevc(Buffer.concat(gop.map((q) => q.data)));
    assert.equal(probed.length, gop.length, 'the latest GOP decodes on its own');
    assert.deepEqual([probed[0].width, probed[0].height], [320, 240]);
  } finally {
    await p.stop();
  }
  assert.equal(p.running, false);
});

test('a stalled encoder costs dropped frames, not memory; it catches up when it runs again', async () => {
  const { p, encoder, pictures } = pipeline({ maxQueuedFrames: 2 });
  p.start();
  const frameBytes = 640 * 640 * 3;
  try {
    await waitFor(() => pictures.length >= 2, 'the first pictures', 10_000);
    const pid = encoder.pid!;
    process.kill(pid, 'SIGSTOP'); // our own child: it stops reading its input
    try {
      const droppedBefore = p.stats().dropped;
      let maxQueued = 0;
      for (let i = 0; i < 20; i++) {
        await sleep(100);
        maxQueued = Math.max(maxQueued, encoder.queuedBytes());
      }
      const dropped = p.stats().dropped - droppedBefore;
      // 2 s at 5 fps is 10 frames; the pipe and the queue of 2 take a few of them.
      assert.ok(dropped >= 4, `${dropped} frames dropped while the encoder was stalled`);
      assert.ok(maxQueued <= 2 * frameBytes, `at most 2 frames queued (${maxQueued} bytes)`);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const count = pictures.length;
    await waitFor(() => pictures.length >= count + 5, 'pictures after the encoder resumed', 10_000);
    assert.equal(p.encoder().restarts, 0);
  } finally {
    await p.stop();
  }
});

test('an encoder killed mid-stream is recorded, announced, restarted; the new run starts on a keyframe', async () => {
  const { p, encoder, pictures, health } = pipeline();
  const exits: EncoderExit[] = [];
  p.onExit((e) => exits.push(e));
  p.start();
  try {
    await waitFor(() => pictures.length >= 3, 'the first pictures', 10_000);
    const first = encoder.pid!;
    assert.equal(p.lastExit(), null);
    process.kill(first, 'SIGKILL');
    await waitFor(() => exits.length === 1, 'the exit', 5000);
    assert.match(exits[0].message, /SIGKILL/);
    assert.ok(Math.abs(Date.parse(exits[0].at) - Date.now()) < 2000);
    assert.deepEqual(p.lastExit(), exits[0]);
    assert.ok(
      health.some((h) => h.state === 'degraded' && h.message.includes('SIGKILL')),
      'health says why',
    );
    const before = pictures.length;
    await waitFor(() => pictures.length >= before + 3, 'pictures from the restarted encoder', 10_000);
    const info = p.encoder();
    assert.equal(info.restarts, 1);
    assert.equal(info.generation, 2);
    assert.ok(info.pid !== null && info.pid !== first, 'a new process');
    assert.equal(health.at(-1)!.state, 'ok', 'healthy again once it produces');
    const second = pictures.filter((q) => q.generation === 2);
    assert.ok(second[0].keyframe, 'the new run starts on a keyframe');
    assert.ok(
      pictures.every((q, i) => q.index === i),
      'indexes keep rising across the restart',
    );
  } finally {
    await p.stop();
  }
});

test('an encoder that cannot run is retried with a doubling wait, and the pipeline keeps going', async () => {
  const { p, health } = pipeline({ program: '/nonexistent/ffmpeg', restartMinMs: 100 });
  const exits: number[] = [];
  p.onExit(() => exits.push(Date.now()));
  p.start();
  try {
    await waitFor(() => exits.length >= 4, 'four failed starts', 5000);
    assert.match(p.lastExit()!.message, /could not run.*ENOENT/);
    assert.equal(health.at(-1)!.state, 'degraded');
    const waits = exits.slice(1).map((t, i) => t - exits[i]);
    // 100, 200, 400 ms (capped at 1000).
    assert.ok(waits[0] >= 90 && waits[1] >= 190 && waits[2] >= 390, `waits double: ${waits.join(', ')}`);
    assert.ok(p.stats().dropped > 0, 'frames without an encoder count as dropped');
    assert.equal(p.latestGop().length, 0);
  } finally {
    await p.stop();
  }
});

test('new settings restart the encoder at the new size; the new run starts on a keyframe', async () => {
  const { p, pictures } = pipeline();
  p.start();
  try {
    await waitFor(() => pictures.length >= 2, 'the first pictures', 10_000);
    await p.setSettings({ ...SETTINGS, width: 160, height: 120, gop: 3 });
    assert.deepEqual([p.width, p.height, p.gop], [160, 120, 3]);
    await waitFor(() => pictures.filter((q) => q.generation === 2).length >= 4, 'pictures at the new settings', 10_000);
    const second = pictures.filter((q) => q.generation === 2);
    assert.ok(second[0].keyframe);
    const probed = await probeHevc(Buffer.concat(second.map((q) => q.data)));
    assert.deepEqual([probed[0].width, probed[0].height], [160, 120]);
    assert.deepEqual(keyframePositions(probed).slice(0, 2), [0, 3]);
    assert.equal(p.encoder().restarts, 0, 'a planned restart is not an exit');
    assert.equal(p.lastExit(), null);
  } finally {
    await p.stop();
  }
});

test('settings given before the start are the first run’s', async () => {
  const { p, pictures } = pipeline();
  await p.setSettings({ ...SETTINGS, width: 160, height: 120 });
  assert.deepEqual([p.width, p.height], [160, 120]);
  p.start();
  try {
    await waitFor(() => pictures.length >= 1, 'the first picture', 10_000);
    const [first] = await probeHevc(Buffer.concat(pictures.slice(0, 1).map((q) => q.data)));
    assert.deepEqual([first.width, first.height], [160, 120]);
    assert.equal(p.encoder().generation, 1);
  } finally {
    await p.stop();
  }
});
