import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginBus, PluginClock } from '../../../../core/src/plugin/context.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import type { Frame, FrameSource } from '../../../../plugins/camera/src/service.js';
import type { DieTemperature, TelemetryChannel } from '../../../../plugins/die-temp/src/service.js';
import type { DetectorBackend } from '../../../../plugins/detector/src/backends/backend.js';
import { DetectionLoop } from '../../../../plugins/detector/src/detection-loop.js';
import { Pipeline } from '../../../../plugins/detector/src/pipeline.js';

interface TelemetryBody {
  detections: unknown[];
  telemetry: {
    die_temp: number | null;
    fps: number;
    camera_fps?: number | null;
    skipped_fps?: number | null;
    state?: string;
    suspended_since?: string | null;
    reason?: string | null;
  };
}

/**
 * A detection loop on a virtual clock: each frame takes `frameMs` of virtual time, the camera
 * delivers `cameraFps` frames per second, and `run(ms)` fires the loop's timers in time order.
 */
function harness(options: { strideFps?: number; cameraFps?: number; frameMs?: number } = {}) {
  const cameraFps = options.cameraFps ?? 15;
  const frameMs = options.frameMs ?? 20;
  let now = 0;
  const timers = new Map<NodeJS.Timeout, { at: number; fn: () => void }>();
  let next = 1;
  const clock: PluginClock = {
    now: () => now,
    setTimeout(fn, ms) {
      const handle = next++ as unknown as NodeJS.Timeout;
      timers.set(handle, { at: now + ms, fn });
      return handle;
    },
    setInterval: () => {
      throw new Error('not used by the loop');
    },
    clear: (t) => void timers.delete(t),
  };
  const source: FrameSource = {
    width: 640,
    height: 640,
    nominalFps: cameraFps,
    intrinsics: { fx: 500, fy: 500, cx: 320, cy: 320 },
    read: async (): Promise<Frame> => ({
      index: Math.floor((now * cameraFps) / 1000),
      timestampMs: 1_700_000_000_000 + now,
      width: 640,
      height: 640,
      format: 'bgr888',
      data: new Uint8Array(0),
    }),
    close: async () => undefined,
  };
  // One confident person per frame, found in `frameMs` of virtual time.
  const backend = {
    detect: async () => {
      now += frameMs;
      return [{ c: 0, p: 0.9, b: [100, 100, 160, 300] }];
    },
  } as unknown as DetectorBackend;
  const pipeline = new Pipeline(backend, () => now);
  const published: { suffix: string; body: unknown }[] = [];
  const bus: PluginBus = {
    namespace: 'devices/cam-l/',
    connected: true,
    publish: async (suffix, payload) => void published.push({ suffix, body: payload }),
    subscribe: () => Promise.reject(new Error('not used')),
    onConnect: () => undefined,
  };
  const temperature: DieTemperature = {
    current: () => 61.25,
    reason: () => null,
    onReading: () => () => undefined,
    thermal: () => ({ state: pipeline.throttle.suspended ? 'THERMAL_CRITICAL' : 'NORMAL', reason: null }),
    onThermalChange: () => () => undefined,
  };
  // The telemetry channel (die-temp's) as the detector feeds it: one frame, its detections and figures.
  const telemetry: TelemetryChannel = {
    attach: () => () => undefined,
    publishFrame: async (frame) =>
      void published.push({ suffix: 'telemetry', body: { detections: frame.detections, telemetry: { die_temp: 61.3, ...frame.figures } } }),
  };
  const loop = new DetectionLoop({
    source,
    pipeline,
    temperature,
    telemetry,
    bus,
    clock,
    log: createLogger({ level: 'silent' }),
    cameraId: 'front_door',
    strideFps: options.strideFps ?? 10,
    onError: () => undefined,
  });
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  return {
    loop,
    pipeline,
    now: () => now,
    telemetry: () => published.filter((m) => m.suffix === 'telemetry').map((m) => m.body as TelemetryBody),
    dets: () => published.filter((m) => m.suffix === 'dets'),
    /** Fires the loop's timers, in time order, until `ms` of virtual time have passed. */
    async run(ms: number) {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].sort((a, b) => a[1].at - b[1].at)[0];
        if (!due || due[1].at > until) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
        await settle();
      }
      now = Math.max(now, until);
    },
  };
}

describe('detection loop: telemetry rates are measured', () => {
  it('the first message reports the rate its frame ran at, not 0', async () => {
    const h = harness();
    h.loop.start();
    await h.run(1);
    const first = h.telemetry()[0];
    assert.equal(first.telemetry.fps, 10);
    assert.equal(first.telemetry.camera_fps, null, 'one frame read: the camera rate is not known yet');
    await h.run(3000);
    const last = h.telemetry().at(-1)!;
    assert.equal(last.telemetry.fps, 10);
    assert.equal(last.telemetry.camera_fps, 15);
    assert.equal(last.telemetry.skipped_fps, 5, 'a 15 Hz camera seen at a 10 Hz stride skips 5 frames a second');
    assert.ok(Number.isInteger(last.telemetry.fps), 'fps is an integer, as the spec types it');
    await h.loop.stop();
  });

  it('reads 0 while detection is suspended, the camera rate goes on, and the rate is back at once after', async () => {
    const h = harness();
    h.loop.start();
    await h.run(2000);
    const suspendedAt = new Date(h.now()).toISOString();
    h.pipeline.setThrottle({ suspended: true });
    await h.run(1000);
    const during = h.telemetry().slice(-5);
    assert.ok(
      during.every((t) => t.telemetry.fps === 0 && t.detections.length === 0),
      JSON.stringify(during.map((t) => t.telemetry)),
    );
    assert.ok(during.every((t) => t.telemetry.camera_fps === 15 && t.telemetry.skipped_fps === 15));
    // Announced: no detections is not an empty scene; since when and why.
    assert.ok(during.every((t) => t.telemetry.state === 'suspended' && t.telemetry.suspended_since === suspendedAt));
    assert.match(during[0].telemetry.reason!, /^THERMAL_CRITICAL \(die at 61.3 C\): the thermal governor suspended neural work$/);
    assert.equal(h.loop.state.suspension?.since, suspendedAt);
    const detsBefore = h.dets().length;
    h.pipeline.setThrottle({ suspended: false });
    await h.run(150);
    assert.ok(h.dets().length > detsBefore, 'dets resume');
    assert.equal(h.telemetry().at(-1)!.telemetry.fps, 10, 'the first frame after the pause counts as its own rate');
    assert.deepEqual([h.telemetry().at(-1)!.telemetry.state, h.telemetry().at(-1)!.telemetry.suspended_since], ['running', null]);
    await h.loop.stop();
  });

  it('follows a lowered stride, and a frame slower than its period lowers the rate', async () => {
    const h = harness({ frameMs: 250 });
    h.loop.start();
    await h.run(3000);
    assert.equal(h.telemetry().at(-1)!.telemetry.fps, 4, '250 ms frames: 4 Hz, whatever the stride says');
    await h.loop.stop();
    const w = harness();
    w.loop.start();
    await w.run(3000);
    w.pipeline.setThrottle({ strideFps: 5, suspended: false });
    await w.run(3000);
    assert.equal(w.telemetry().at(-1)!.telemetry.fps, 5);
    assert.equal(w.loop.state.achievedFps, 5);
    await w.loop.stop();
  });
});
