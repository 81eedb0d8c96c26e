import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Detection } from '../../../../../core/src/contracts/detection.js';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import type { Frame } from '../../../../../plugins/camera/src/service.js';
import { OnnxBackend } from '../../../../../plugins/detector/src/backends/onnx-backend.js';
import { createBackend, parseBackendName } from '../../../../../plugins/detector/src/backends/create-backend.js';
import { decodeReference } from '../../../../../plugins/detector/src/model/decode-reference.js';
import { preprocessReference } from '../../../../../plugins/detector/src/model/preprocess-reference.js';
import { OMNI15_LABELS, OMNI15_TO_PRODUCTION_EXAMPLE, PRODUCTION_LABELS } from '../../../../../plugins/detector/src/model/class-maps.js';
import { buildTestDetrModel, testFrameBytes, testLabels, writeBareModel, writePackage, type TestModel } from '../../../../support/onnx-model.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

const THRESHOLD = 0.3;

function frameOf(seed: number): Frame {
  return { index: seed, timestampMs: 1000 + seed, width: 640, height: 640, format: 'bgr888', data: testFrameBytes(640, 640, seed) };
}

/** The expected detections, computed without the back-end: reference preprocessing, forward pass, decode. */
function expectedDetections(model: TestModel, frame: Frame, remap: Int32Array | null): Detection[] {
  const { height, width, queries, classes } = model.spec;
  const input = preprocessReference(frame.data, { srcWidth: 640, srcHeight: 640, dstWidth: width, dstHeight: height });
  const { boxes, logits } = model.forward(input);
  // The comparison is only meaningful if no score sits on the threshold, where float32 rounding could flip it.
  for (const x of logits) assert.ok(Math.abs(1 / (1 + Math.exp(-x)) - THRESHOLD) > 3e-4, 'a reference score sits on the threshold');
  return decodeReference(boxes, logits, { queries, classes, frameWidth: 640, frameHeight: 640, scoreThreshold: THRESHOLD, remap });
}

function assertSameDetections(actual: Detection[], expected: Detection[]): void {
  assert.ok(expected.length > 0, 'the reference finds detections, so the comparison is not vacuous');
  assert.equal(actual.length, expected.length, `detection count ${actual.length} vs reference ${expected.length}`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    assert.equal(a.c, e.c, `detection ${i} class`);
    assert.ok(Math.abs(a.p - e.p) < 1e-3, `detection ${i} score ${a.p} vs ${e.p}`);
    for (let j = 0; j < 4; j++) assert.ok(Math.abs(a.b[j] - e.b[j]) < 0.1, `detection ${i} box ${a.b.join(',')} vs ${e.b.join(',')}`);
  }
}

const identity23 = Int32Array.from({ length: 23 }, (_, i) => i);
/** The production head in dets ids: 0-13 named, 14-22 slots the spec leaves unnamed. */
const productionClasses = PRODUCTION_LABELS.map((name, id) => ({ id, name, model_labels: name ? [name] : [] }));

test('onnx back-end on a 544 package (under a top folder): detections equal the reference computation', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  const backend = await (async () => {
    const model = buildTestDetrModel({ height: 544, width: 544, queries: 12, classes: 23, seed: 11 });
    const path = await writePackage(dir, { modelName: 'rf_detr_test.onnx', model: model.bytes, labels: testLabels(544), topFolder: 'rf_detr_edge4' });
    const b = await OnnxBackend.create({ modelPath: path, scoreThreshold: THRESHOLD });
    return { b, model, path };
  })();
  try {
    const { b, model, path } = backend;
    for (const seed of [1, 2]) {
      const frame = frameOf(seed);
      assertSameDetections(await b.detect(frame), expectedDetections(model, frame, identity23));
    }
    const status = b.status();
    assert.deepEqual(status, {
      backend: 'onnx',
      modelPath: path,
      packageVersion: '2025.06.1',
      ontologyHash: 'sha256:3f1c0de5',
      trainJobId: 'train-0042',
      classMap: 'production',
      classes: productionClasses,
      inputShape: [1, 3, 544, 544],
    });
    assert.deepEqual(b.info.outputs, { boxes: 'dets', logits: 'labels' });
    assert.deepEqual(b.info.modelInputShape, [1, 3, 544, 544]);
  } finally {
    await backend.b.close();
    await cleanup();
  }
});

test('onnx back-end on a bare 640 .onnx with pred_boxes/pred_logits names and no labels.json', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  const model = buildTestDetrModel({
    height: 640,
    width: 640,
    queries: 8,
    classes: 23,
    seed: 5,
    boxesName: 'pred_boxes',
    logitsName: 'pred_logits',
    symbolicBatch: true,
  });
  const path = await writeBareModel(dir, 'inference_model.onnx', model.bytes);
  const b = await createBackend('onnx', { env: { RF_DETR_MODEL_PATH: path }, scoreThreshold: THRESHOLD, threads: 1 });
  try {
    const frame = frameOf(4);
    const [first, again] = await Promise.all([b.detect(frame), b.detect(frame)]);
    assertSameDetections(first, expectedDetections(model, frame, identity23));
    assert.deepEqual(again, first, 'concurrent calls share one input buffer safely');
    const status = b.status();
    assert.equal(status.modelPath, path);
    assert.equal(status.packageVersion, null);
    assert.deepEqual(status.inputShape, [1, 3, 640, 640]);
    assert.deepEqual(status.classes, productionClasses);
  } finally {
    await b.close();
    await cleanup();
  }
});

test('status lists the classes in the ids dets carry: Omni weights remapped to production, names beside them', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  const model = buildTestDetrModel({ height: 672, width: 672, queries: 10, classes: 15, seed: 21, logitBias: 1 });
  const labels = testLabels(672, { classes: [...OMNI15_LABELS], class_map: 'omni15', remap: { ...OMNI15_TO_PRODUCTION_EXAMPLE } });
  const b = await OnnxBackend.create({ modelPath: await writePackage(dir, { modelName: 'omni.onnx', model: model.bytes, labels }), scoreThreshold: THRESHOLD });
  try {
    const status = b.status();
    assert.deepEqual(status.classes, [
      { id: 0, name: 'person', model_labels: ['person'] },
      { id: 1, name: 'bicycle', model_labels: ['bicycle'] },
      { id: 2, name: 'car', model_labels: ['car'] },
      { id: 3, name: 'bus', model_labels: ['bus'] },
      { id: 5, name: 'truck', model_labels: ['truck'] },
      { id: 10, name: 'gun', model_labels: ['handgun'] },
      { id: 11, name: 'knife', model_labels: ['knife'] },
      { id: 12, name: 'rifle', model_labels: ['rifle'] },
    ]);
    const dets = await b.detect(frameOf(2));
    assert.ok(dets.length > 0);
    const ids = new Set(status.classes.map((c) => c.id));
    for (const d of dets) assert.ok(ids.has(d.c), `det class ${d.c} is listed in the status`);
  } finally {
    await b.close();
    await cleanup();
  }
});

test('a bare model whose head is not the 23-class production head needs labels.json', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const model = buildTestDetrModel({ height: 640, width: 640, queries: 4, classes: 15 });
    const path = await writeBareModel(dir, 'omni.onnx', model.bytes);
    await assert.rejects(OnnxBackend.create({ modelPath: path }), (err: unknown) => {
      assert.ok(isLookoutError(err, 'model_class_map_unmapped'));
      assert.match(err.message, /15-class head and no labels\.json/);
      return true;
    });
  } finally {
    await cleanup();
  }
});

test('detect refuses a frame that is not BGR888 of its size, and a closed back-end', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  const model = buildTestDetrModel({ height: 544, width: 544, queries: 4, classes: 23 });
  const b = await OnnxBackend.create({ modelPath: await writePackage(dir, { modelName: 'm.onnx', model: model.bytes, labels: testLabels(544) }) });
  try {
    await assert.rejects(b.detect({ ...frameOf(1), data: new Uint8Array(10) }), (err: unknown) => isLookoutError(err, 'message_invalid'));
    await b.close();
    await assert.rejects(b.detect(frameOf(1)), (err: unknown) => isLookoutError(err, 'backend_unavailable'));
  } finally {
    await b.close();
    await cleanup();
  }
});

test('createBackend: back-end names and a missing model path', async () => {
  assert.equal(parseBackendName(' ONNX '), 'onnx');
  assert.throws(
    () => parseBackendName('tensorrt'),
    (err: unknown) => isLookoutError(err, 'config_invalid'),
  );
  await assert.rejects(createBackend('onnx', { env: {} }), (err: unknown) => {
    assert.ok(isLookoutError(err, 'config_invalid'));
    assert.match(err.message, /RF_DETR_MODEL_PATH or RF_DETR_EDGE4_MODEL/);
    return true;
  });
  const sim = await createBackend('sim', { env: {} });
  assert.equal(sim.name, 'sim');
  await sim.close();
});
