import { inferenceKit } from '../../../../plugins/detector/src/inference-kit.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Detection } from '../../../../core/src/contracts/detection.js';
import { isLookoutError, type LookoutError } from '../../../../core/src/errors/lookout-error.js';
import type { Frame } from '../../../../plugins/camera/src/service.js';
import { SimFrameSource } from '../../../../plugins/camera/src/sim-frame-source.js';
import { loadScenario } from '../../../../plugins/camera/src/scenario-files.js';
import { SimDetectorBackend } from '../../../../plugins/detector/src/backends/sim-backend.js';
import { preprocessReference } from '../../../../plugins/detector/src/model/preprocess-reference.js';
import { OnnxDepthBackend } from '../../../../plugins/depth/src/backends/onnx-depth-backend.js';
import { SimDepthBackend } from '../../../../plugins/depth/src/backends/sim-depth-backend.js';
import { openDepthBackend } from '../../../../plugins/depth/src/backends/open-depth-backend.js';
import type { DepthBackend } from '../../../../plugins/depth/src/backends/depth-backend.js';
import { DepthStage } from '../../../../plugins/depth/src/depth-stage.js';
import { buildDepthModel } from '../../../support/depth-onnx-model.js';
import { scratchDir } from '../../../support/scratch-dir.js';

const K = { fx: 500, fy: 500, cx: 320, cy: 320 };
const SIZE = { width: 640, height: 640 };

const scratch = () => scratchDir('lookout-depth-');

/** A black 640x640 frame with a pure red rectangle (BGR 0,0,255) at [200,300)x[240,560). */
function redBoxFrame(index = 0, timestampMs = 0): Frame {
  const data = new Uint8Array(640 * 640 * 3);
  for (let y = 300; y < 560; y++) for (let x = 200; x < 240; x++) data[(y * 640 + x) * 3 + 2] = 255;
  return { index, timestampMs, width: 640, height: 640, format: 'bgr888', data };
}

test('onnx depth back-end: the depth map equals the reference computation; fusion reads it', async () => {
  const { dir, cleanup } = await scratch();
  try {
    const model = buildDepthModel({ height: 64, width: 64, weights: [1, 0.5, -0.25], bias: 5 });
    const path = join(dir, 'mono_depth.onnx');
    await writeFile(path, model.bytes);
    const backend = await OnnxDepthBackend.open({ kit: inferenceKit, modelPath: path });
    try {
      assert.deepEqual(backend.inputSize, [64, 64]);
      // A textured frame: every output pixel is checked against preprocessing + the forward pass.
      const data = Uint8Array.from({ length: 640 * 640 * 3 }, (_, i) => (i * 2654435761) >>> 24);
      const frame: Frame = { index: 1, timestampMs: 0, width: 640, height: 640, format: 'bgr888', data };
      const map = await backend.estimate(frame);
      assert.deepEqual([map.width, map.height], [64, 64]);
      const expected = model.forward(preprocessReference(data, { srcWidth: 640, srcHeight: 640, dstWidth: 64, dstHeight: 64 }), 64, 64);
      let worst = 0;
      for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(map.data[i] - expected[i]));
      assert.ok(worst < 1e-4, `largest difference from the reference: ${worst}`);

      // A red person on black: red is R = 1 after scaling, so depth = 5 + (1 - 0.485) / 0.229 there.
      const stage = new DepthStage({ backend, intrinsics: K, intrinsicsSize: SIZE, fps: 8 });
      const redDepth = 5 + (1 - 0.485) / 0.229 + 0.5 * (-0.456 / 0.224) - 0.25 * (-0.406 / 0.225);
      const [person] = await stage.process([{ c: 0, p: 0.9, b: [200, 240, 240, 560], track_id: 4 }], redBoxFrame());
      assert.ok(Math.abs(person.z! - redDepth) < 2e-3, `z ${person.z} vs ${redDepth}`);
      assert.ok(Math.abs(person.x! - ((220 - 320) * person.z!) / 500) < 2e-3);
      assert.ok(Math.abs(person.y! - ((400 - 320) * person.z!) / 500) < 2e-3);
      assert.equal(person.track_id, 4, 'other fields pass through');
    } finally {
      await backend.close();
    }
  } finally {
    await cleanup();
  }
});

test('onnx depth back-end: inverse-depth output is read as scale / value', async () => {
  const { dir, cleanup } = await scratch();
  try {
    const path = join(dir, 'inv.onnx');
    await writeFile(path, buildDepthModel({ height: 32, width: 32, weights: [0, 0, 0], bias: 0.25 }).bytes);
    const backend = await OnnxDepthBackend.open({ kit: inferenceKit, modelPath: path, output: 'inverse', scale: 2 });
    try {
      const map = await backend.estimate(redBoxFrame());
      assert.ok(Array.from(map.data).every((v) => Math.abs(v - 8) < 1e-5));
    } finally {
      await backend.close();
    }
  } finally {
    await cleanup();
  }
});

test('onnx depth back-end refuses what it cannot run, with typed errors', async () => {
  const { dir, cleanup } = await scratch();
  try {
    const dynamic = join(dir, 'dynamic.onnx');
    await writeFile(dynamic, buildDepthModel({ height: 'h', width: 'w' }).bytes);
    await assert.rejects(
      OnnxDepthBackend.open({ kit: inferenceKit, modelPath: dynamic }),
      (e) => isLookoutError(e, 'model_shape_mismatch') && /\[1, 3, H, W\]/.test(e.message),
    );
    const gray = join(dir, 'gray.onnx');
    await writeFile(gray, buildDepthModel({ height: 8, width: 8, channels: 1 }).bytes);
    await assert.rejects(OnnxDepthBackend.open({ kit: inferenceKit, modelPath: gray }), (e) => isLookoutError(e, 'model_shape_mismatch'));
    const junk = join(dir, 'junk.onnx');
    await writeFile(junk, 'not a model');
    await assert.rejects(OnnxDepthBackend.open({ kit: inferenceKit, modelPath: junk }), (e) => isLookoutError(e, 'model_package_invalid'));
    await assert.rejects(
      OnnxDepthBackend.open({ kit: inferenceKit, modelPath: join(dir, 'missing.onnx') }),
      (e) => isLookoutError(e, 'backend_unavailable') && /MONO_DEPTH_MODEL_PATH/.test(e.message),
    );
    await assert.rejects(OnnxDepthBackend.open({ kit: inferenceKit, modelPath: junk, scale: 0 }), (e) => isLookoutError(e, 'config_invalid'));
  } finally {
    await cleanup();
  }
});

test('onnx depth back-end: closed once, then a frame is refused with a typed error', async () => {
  const { dir, cleanup } = await scratch();
  try {
    const path = join(dir, 'mono_depth.onnx');
    await writeFile(path, buildDepthModel({ height: 16, width: 16 }).bytes);
    const backend = await OnnxDepthBackend.open({ kit: inferenceKit, modelPath: path });
    const frame = redBoxFrame();
    const running = backend.estimate(frame);
    await backend.close(); // waits for the frame in flight
    assert.equal((await running).width, 16);
    await backend.close();
    await assert.rejects(backend.estimate(frame), (e) => isLookoutError(e, 'backend_unavailable') && /closed/.test(e.message));
  } finally {
    await cleanup();
  }
});

test('back-end choice: onnx when the model is there, sim only for simulated frames, else refused', async () => {
  const { dir, cleanup } = await scratch();
  try {
    const rel = '/data/models/mono_depth.onnx';
    const a = await openDepthBackend({ kit: inferenceKit, modelPath: rel, dataDir: dir, simSource: true });
    assert.equal(a.backend.name, 'sim');
    assert.match(a.note!, /no depth model at .*mono_depth\.onnx/);
    await assert.rejects(openDepthBackend({ kit: inferenceKit, modelPath: rel, dataDir: dir, simSource: false }), (e) =>
      isLookoutError(e, 'backend_unavailable'),
    );
    await assert.rejects(openDepthBackend({ kit: inferenceKit, backend: 'onnx', dataDir: dir, simSource: true }), (e) => isLookoutError(e, 'config_invalid'));
    await assert.rejects(openDepthBackend({ kit: inferenceKit, backend: 'sim', dataDir: dir, simSource: false }), (e) =>
      isLookoutError(e, 'backend_unavailable'),
    );
    await mkdir(join(dir, 'data', 'models'), { recursive: true });
    await writeFile(join(dir, rel), buildDepthModel({ height: 16, width: 16 }).bytes);
    const b = await openDepthBackend({ kit: inferenceKit, modelPath: rel, dataDir: dir, simSource: true });
    assert.equal(b.backend.name, 'onnx');
    await b.backend.close();
    await assert.rejects(openDepthBackend({ kit: inferenceKit, modelPath: '../../etc/passwd', dataDir: dir, simSource: true }), (e) =>
      isLookoutError(e, 'forbidden'),
    );
  } finally {
    await cleanup();
  }
});

/** Counts estimates and can be made to fail: wraps the real sim back-end. */
class CountingBackend implements DepthBackend {
  readonly name = 'sim' as const;
  readonly source = 'counting sim';
  calls = 0;
  failing = false;
  private readonly inner = new SimDepthBackend();
  async estimate(frame: Frame) {
    this.calls += 1;
    if (this.failing) throw new Error('model crashed');
    return this.inner.estimate(frame);
  }
  async close() {}
}

function truthFrame(timestampMs: number, depthM = 6): Frame {
  return {
    index: timestampMs / 100,
    timestampMs,
    width: 640,
    height: 640,
    format: 'bgr888',
    data: new Uint8Array(0),
    truth: [{ id: 1, classId: 0, label: 'person', box: [300, 200, 340, 440], depthM, visibility: 1 }],
  };
}
const person: Detection = { c: 0, p: 0.9, b: [300, 200, 340, 440] };

test('depth runs at MONO_DEPTH_FPS and frames in between reuse the latest map', async () => {
  const backend = new CountingBackend();
  const stage = new DepthStage({ backend, intrinsics: K, intrinsicsSize: SIZE, fps: 8 });
  const zs: number[] = [];
  // 2 s of 10 Hz frames; the truth depth changes every frame, so a reused map shows the older depth.
  for (let i = 0; i < 20; i++) {
    const [d] = await stage.process([person], truthFrame(i * 100, 5 + i * 0.1));
    zs.push(d.z!);
  }
  assert.equal(backend.calls, 16, '8 estimates per second');
  const reused = zs.filter((z, i) => Math.abs(z - (5 + i * 0.1)) > 1e-6).length;
  assert.equal(reused, 4, 'the other frames reuse the previous map');
  // No detections, no depth work.
  await stage.process([], truthFrame(3000));
  assert.equal(backend.calls, 16);
});

test('a failing model: the last map serves for three periods, then detections go on without x, y, z', async () => {
  const backend = new CountingBackend();
  const errors: LookoutError[] = [];
  const stage = new DepthStage({ backend, intrinsics: K, intrinsicsSize: SIZE, fps: 10, onError: (e) => errors.push(e) });
  assert.equal((await stage.process([person], truthFrame(0)))[0].z, 6);
  backend.failing = true;
  assert.equal((await stage.process([person], truthFrame(100)))[0].z, 6);
  assert.equal((await stage.process([person], truthFrame(300)))[0].z, 6);
  const late = await stage.process([{ ...person, x: 1, y: 2, z: 3 }], truthFrame(400));
  assert.deepEqual(late, [person], 'no stale or upstream coordinates pass');
  assert.equal(errors.length, 3);
  assert.match(errors[0].message, /model crashed/);
});

test('simulated scene: z is the true depth and x, y back-project the box centre', async () => {
  const source = new SimFrameSource(loadScenario('people-crossing').scenario, { originMs: 0 });
  const detector = new SimDetectorBackend({ seed: 3, boxJitterPx: 0 });
  const stage = new DepthStage({ backend: new SimDepthBackend(), intrinsics: source.intrinsics, intrinsicsSize: source, fps: 10 });
  let checked = 0;
  for (let i = 0; i < 120; i += 7) {
    const frame = source.readSync(i * 100);
    const fused = await stage.process(detector.detectSync(frame), frame);
    for (const d of fused) {
      const g = frame.truth!.find((t) => t.classId === d.c && Math.abs(t.box[0] - d.b[0]) < 0.5 && Math.abs(t.box[2] - d.b[2]) < 0.5);
      if (!g || g.visibility < 0.95) continue;
      assert.ok(Math.abs(d.z! - g.depthM) < 1e-3, `frame ${i}: z ${d.z} vs truth ${g.depthM}`);
      const u = (d.b[0] + d.b[2]) / 2;
      assert.ok(Math.abs(d.x! - ((u - 320) * d.z!) / 500) < 2e-3);
      checked++;
    }
  }
  await source.close();
  assert.ok(checked >= 10, `checked ${checked} detections`);
});
