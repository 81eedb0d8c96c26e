import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import type { Frame } from '../../../../../plugins/camera/src/service.js';
import { OnnxBackend } from '../../../../../plugins/detector/src/backends/onnx-backend.js';
import {
  countGatedPersons,
  isWeaponClass,
  OMNI15_CLASSES,
  OMNI15_LABELS,
  OMNI15_TO_PRODUCTION_EXAMPLE,
  passesPersonGate,
  PERSON_CONFIDENCE_GATE,
  PRODUCTION_LABELS,
  WEAPONS_ONTOLOGY_DEFAULT,
} from '../../../../../plugins/detector/src/model/class-maps.js';
import { resolveClassMap } from '../../../../../plugins/detector/src/model/class-remap.js';
import { decodeReference } from '../../../../../plugins/detector/src/model/decode-reference.js';
import { preprocessReference } from '../../../../../plugins/detector/src/model/preprocess-reference.js';
import { buildTestDetrModel, testFrameBytes, testLabels, writePackage } from '../../../../support/onnx-model.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

test('the production map: person 0, weapons 10-13, slots 14-22 without invented labels', () => {
  assert.equal(PRODUCTION_LABELS.length, 23);
  assert.equal(PRODUCTION_LABELS[0], 'person');
  assert.deepEqual(PRODUCTION_LABELS.slice(10, 14), ['gun', 'knife', 'rifle', 'shotgun']);
  assert.deepEqual(PRODUCTION_LABELS.slice(14), Array(9).fill(null));
  assert.ok([10, 11, 12, 13].every(isWeaponClass) && !isWeaponClass(0) && !isWeaponClass(14));
});

test('the Omni 15 map: person 8, groups, routes; the weapons ontology default', () => {
  assert.equal(OMNI15_LABELS.length, 15);
  assert.equal(OMNI15_LABELS[8], 'person');
  assert.equal(OMNI15_LABELS[0], 'handgun');
  assert.equal(OMNI15_LABELS[14], 'debris');
  assert.deepEqual(
    OMNI15_CLASSES.filter((c) => c.group === 'weapons').map((c) => c.label),
    ['handgun', 'rifle', 'knife'],
  );
  assert.equal(OMNI15_CLASSES[10].route, 'text_recognition_precision');
  assert.equal(OMNI15_CLASSES[12].route, 'qr_decode_macro');
  assert.deepEqual(WEAPONS_ONTOLOGY_DEFAULT, ['handgun', 'rifle', 'knife', 'backpack']);
});

test('person gate: class 0 with p >= 0.35 only', () => {
  assert.equal(PERSON_CONFIDENCE_GATE, 0.35);
  assert.ok(passesPersonGate({ c: 0, p: 0.35 }));
  assert.ok(!passesPersonGate({ c: 0, p: 0.3499 }));
  assert.ok(!passesPersonGate({ c: 8, p: 0.99 }));
  assert.equal(
    countGatedPersons([
      { c: 0, p: 0.9 },
      { c: 0, p: 0.2 },
      { c: 10, p: 0.9 },
      { c: 0, p: 0.35 },
    ]),
    2,
  );
});

const omniLabels = (remap?: Record<string, number>) => testLabels(672, { classes: [...OMNI15_LABELS], class_map: 'omni15', ...(remap ? { remap } : {}) });

test('class map resolution: unmapped Omni and custom heads are refused, person must map to 0 and only person', () => {
  const unmapped = (fn: () => unknown, pattern: RegExp) =>
    assert.throws(fn, (err: unknown) => isLookoutError(err, 'model_class_map_unmapped') && pattern.test(err.message));
  unmapped(() => resolveClassMap(omniLabels()), /omni15 has no remap.*Omni person is 8/);
  unmapped(() => resolveClassMap(testLabels(544, { classes: [...WEAPONS_ONTOLOGY_DEFAULT], class_map: 'custom' })), /custom has no remap/);
  unmapped(() => resolveClassMap(omniLabels({ '0': 10 })), /person \(model class 8\) to production 0, not nothing/);
  unmapped(() => resolveClassMap(omniLabels({ '8': 0, '0': 0 })), /sends handgun \(model class 0\) to production 0/);
  assert.throws(
    () => resolveClassMap(omniLabels({ '8': 0, '3': 23 })),
    (err: unknown) => isLookoutError(err, 'model_package_invalid'),
  );
  assert.throws(
    () => resolveClassMap(omniLabels({ '8': 0, '15': 1 })),
    (err: unknown) => isLookoutError(err, 'model_package_invalid'),
  );
  assert.throws(
    () => resolveClassMap(testLabels(544, { classes: ['handgun', 'rifle'], class_map: 'production' })),
    (err: unknown) => isLookoutError(err, 'model_package_invalid') && /"person" at 0/.test(err.message),
  );

  const omni = resolveClassMap(omniLabels({ ...OMNI15_TO_PRODUCTION_EXAMPLE }));
  assert.equal(omni.remap[8], 0);
  assert.equal(omni.remap[0], 10);
  assert.equal(omni.remap[9], -1, 'face has no production id and is dropped');
  const weapons = resolveClassMap(
    testLabels(544, { classes: [...WEAPONS_ONTOLOGY_DEFAULT], class_map: 'custom', remap: { '0': 10, '1': 12, '2': 11, '3': 6 } }),
  );
  assert.deepEqual(Array.from(weapons.remap), [10, 12, 11, 6]);
});

async function omniPackage(dir: string, remap: Record<string, number> | undefined) {
  const model = buildTestDetrModel({ height: 672, width: 672, queries: 10, classes: 15, seed: 21, logitBias: 1 });
  const path = await writePackage(dir, { modelName: 'omni.onnx', model: model.bytes, labels: omniLabels(remap) }, remap ? 'mapped.tar' : 'unmapped.tar');
  return { model, path };
}

test('Omni weights without a remap refuse to load', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const { path } = await omniPackage(dir, undefined);
    await assert.rejects(OnnxBackend.create({ modelPath: path }), (err: unknown) => isLookoutError(err, 'model_class_map_unmapped'));
  } finally {
    await cleanup();
  }
});

test('Omni weights with a remap load, and Omni person (8) is published as production 0', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  const { model, path } = await omniPackage(dir, { ...OMNI15_TO_PRODUCTION_EXAMPLE });
  const backend = await OnnxBackend.create({ modelPath: path, scoreThreshold: 0.3 });
  try {
    const frame: Frame = { index: 0, timestampMs: 0, width: 640, height: 640, format: 'bgr888', data: testFrameBytes(640, 640, 2) };
    const dets = await backend.detect(frame);
    // Which (query, model class) pairs the model itself scores, from the reference forward pass.
    const input = preprocessReference(frame.data, { srcWidth: 640, srcHeight: 640, dstWidth: 672, dstHeight: 672 });
    const { boxes, logits } = model.forward(input);
    const raw = decodeReference(boxes, logits, { queries: 10, classes: 15, frameWidth: 640, frameHeight: 640, scoreThreshold: 0.3 });
    const rawPersons = raw.filter((d) => d.c === 8);
    assert.ok(rawPersons.length > 0, 'the model scores Omni persons on this frame');
    assert.equal(dets.filter((d) => d.c === 0).length, rawPersons.length, 'every Omni person arrives as production 0');
    assert.equal(dets.filter((d) => d.c === 8).length, 0, 'nothing is published with the Omni person id');
    const expected = raw.flatMap((d) => {
      const c = OMNI15_TO_PRODUCTION_EXAMPLE[String(d.c)];
      return c === undefined ? [] : [{ ...d, c }];
    });
    assert.deepEqual(
      dets.map((d) => d.c),
      expected.map((d) => d.c),
    );
    assert.equal(backend.status().classMap, 'omni15');
    assert.deepEqual(backend.status().inputShape, [1, 3, 672, 672]);
  } finally {
    await backend.close();
    await cleanup();
  }
});
