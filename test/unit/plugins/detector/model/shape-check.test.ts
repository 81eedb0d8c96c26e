import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isLookoutError, type LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { OnnxBackend } from '../../../../../plugins/detector/src/backends/onnx-backend.js';
import { SnpeBackend, type SnpeBinding, type SnpeLoadOptions } from '../../../../../plugins/detector/src/backends/snpe-backend.js';
import { createBackend } from '../../../../../plugins/detector/src/backends/create-backend.js';
import { decodeReference } from '../../../../../plugins/detector/src/model/decode-reference.js';
import { modelPathFromEnv, readModelPackage } from '../../../../../plugins/detector/src/model/read-package.js';
import { buildTestDetrModel, packageTar, seededRandom, testConfig, testFrameBytes, testLabels, writePackage } from '../../../../support/onnx-model.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

function rejectsWith(code: LookoutError['code'], pattern: RegExp) {
  return (err: unknown) => {
    assert.ok(isLookoutError(err, code), `expected ${code}, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  };
}

test('package says 544, model file is 640: refused naming the three shapes', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const model = buildTestDetrModel({ height: 640, width: 640, queries: 4, classes: 23 });
    const path = await writePackage(dir, { modelName: 'rf_detr.onnx', model: model.bytes, labels: testLabels(544) });
    await assert.rejects(
      OnnxBackend.create({ modelPath: path }),
      rejectsWith('model_shape_mismatch', /package declares \[1,3,544,544\], model file takes \[1,3,640,640\], preprocessing targets \[1,3,544,544\]/),
    );
  } finally {
    await cleanup();
  }
});

test('package and model agree on 640 but preprocessing targets 672 (Omni recipe): refused', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const model = buildTestDetrModel({ height: 640, width: 640, queries: 4, classes: 23 });
    const path = await writePackage(dir, { modelName: 'rf_detr.onnx', model: model.bytes, labels: testLabels(640) });
    await assert.rejects(
      OnnxBackend.create({ modelPath: path, inputSize: 672 }),
      rejectsWith('model_shape_mismatch', /declares \[1,3,640,640\], model file takes \[1,3,640,640\], preprocessing targets \[1,3,672,672\]/),
    );
    const ok = await OnnxBackend.create({ modelPath: path, inputSize: 640 });
    await ok.close();
  } finally {
    await cleanup();
  }
});

test('corrupt and truncated packages are refused as model_package_invalid', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const model = buildTestDetrModel({ height: 544, width: 544, queries: 4, classes: 23 });
    const whole = packageTar({ modelName: 'rf_detr.onnx', model: model.bytes, labels: testLabels(544), topFolder: 'pkg' });

    const truncated = join(dir, 'truncated.tar');
    await writeFile(truncated, whole.subarray(0, whole.length - 1024 - 700));
    await assert.rejects(readModelPackage(truncated), rejectsWith('model_package_invalid', /truncated/));

    const flipped = Uint8Array.from(whole);
    flipped[512 + 10] ^= 0xff; // inside the second header (config.json) name
    const corrupt = join(dir, 'corrupt.tar');
    await writeFile(corrupt, flipped);
    await assert.rejects(readModelPackage(corrupt), rejectsWith('model_package_invalid', /checksum/));

    const rnd = seededRandom(3);
    const noise = join(dir, 'noise.tar');
    await writeFile(
      noise,
      Uint8Array.from({ length: 4096 }, () => Math.floor(rnd() * 256)),
    );
    await assert.rejects(readModelPackage(noise), rejectsWith('model_package_invalid', /not a readable tar package/));

    await assert.rejects(readModelPackage(join(dir, 'absent.tar')), rejectsWith('model_package_invalid', /ENOENT/));
  } finally {
    await cleanup();
  }
});

test('config.json and labels.json are validated; missing pieces are named', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  const model = buildTestDetrModel({ height: 544, width: 544, queries: 4, classes: 23 }).bytes;
  const attempt = async (name: string, contents: Parameters<typeof writePackage>[1]) => readModelPackage(await writePackage(dir, contents, `${name}.tar`));
  try {
    await assert.rejects(
      attempt('bad-config', { modelName: 'm.onnx', model, labels: testLabels(544), config: { model: 'm.onnx', backend: 'tflite' } }),
      rejectsWith('model_package_invalid', /config\.json is invalid: backend/),
    );
    await assert.rejects(
      attempt('bad-labels', { modelName: 'm.onnx', model, labels: { ...testLabels(544), input_shape: [1, 3, 544] } }),
      rejectsWith('model_package_invalid', /labels\.json is invalid: input_shape/),
    );
    // labels.json is optional (spec 02 ships config.json and the model); a broken one is still refused, above.
    assert.equal((await attempt('no-labels', { modelName: 'm.onnx', model })).labels, null);
    await assert.rejects(
      attempt('wrong-model', { modelName: 'm.onnx', model, labels: testLabels(544), config: testConfig('other.onnx') }),
      rejectsWith('model_package_invalid', /names model "other\.onnx" but the package holds no other\.onnx/),
    );
    await assert.rejects(
      attempt('dlc-for-onnx', { modelName: 'm.onnx', model, labels: testLabels(544), config: testConfig('m.txt') }),
      rejectsWith('model_package_invalid', /neither \.dlc nor \.onnx/),
    );
    const pkg = await attempt('good', {
      modelName: 'rf_detr_qcs8550.dlc',
      model,
      labels: testLabels(544),
      config: testConfig('rf_detr_qcs8550.dlc', 'snpe'),
      topFolder: 'rf_detr_edge4',
    });
    assert.equal(pkg.kind, 'tar');
    assert.equal(pkg.modelFormat, 'dlc');
    assert.deepEqual(pkg.config?.backend_properties, { runtime: 'dsp', performance_profile: 'high_performance' });
    assert.deepEqual(await pkg.readModel(), model);
    await assert.rejects(
      OnnxBackend.create({ modelPath: pkg.path }),
      rejectsWith('model_package_invalid', /runs \.onnx models but rf_detr_qcs8550\.dlc is a \.dlc/),
    );

    // config.json's backend is part of the package: a package that contradicts itself does not load.
    const claimsSnpe = await writePackage(
      dir,
      { modelName: 'm.onnx', model, labels: testLabels(544), config: testConfig('m.onnx', 'snpe') },
      'claims-snpe.tar',
    );
    await assert.rejects(
      OnnxBackend.create({ modelPath: claimsSnpe }),
      rejectsWith('model_package_invalid', /config\.json says backend snpe, which runs \.dlc models, but names m\.onnx, an \.onnx model/),
    );
    const claimsOnnx = await writePackage(
      dir,
      { modelName: 'rf_detr_qcs8550.dlc', model, labels: testLabels(544), config: testConfig('rf_detr_qcs8550.dlc', 'onnx') },
      'claims-onnx.tar',
    );
    await assert.rejects(
      SnpeBackend.create({ modelPath: claimsOnnx, env: {}, addonPath: join(dir, 'absent.node') }),
      rejectsWith('model_package_invalid', /config\.json says backend onnx, which runs \.onnx models, but names rf_detr_qcs8550\.dlc, a \.dlc model/),
    );
  } finally {
    await cleanup();
  }
});

test('model path from the environment: RF_DETR_MODEL_PATH, else RF_DETR_EDGE4_MODEL', () => {
  assert.equal(modelPathFromEnv({ RF_DETR_MODEL_PATH: '/app/models/a.dlc', RF_DETR_EDGE4_MODEL: '/data/models/rf_detr_edge4.tar' }), '/app/models/a.dlc');
  assert.equal(modelPathFromEnv({ RF_DETR_MODEL_PATH: ' ', RF_DETR_EDGE4_MODEL: '/data/models/rf_detr_edge4.tar' }), '/data/models/rf_detr_edge4.tar');
  assert.equal(modelPathFromEnv({}), null);
});

async function snpePackage(dir: string, declared: number): Promise<string> {
  return writePackage(
    dir,
    { modelName: 'rf_detr_qcs8550.dlc', model: Uint8Array.from([1, 2, 3, 4]), labels: testLabels(declared), config: testConfig('rf_detr_qcs8550.dlc', 'snpe') },
    'rf_detr_edge4.tar',
  );
}

test('snpe back-end: refuses with backend_unavailable naming the missing addon and SDK', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const path = await snpePackage(dir, 544);
    await assert.rejects(
      createBackend('snpe', { modelPath: path, env: {}, snpe: { addonPath: join(dir, 'lookout_native.node') } }),
      rejectsWith(
        'backend_unavailable',
        /snpe back-end is not available here: the native addon .*lookout_native\.node is not built and the vendor SNPE SDK \(libSNPE\.so, SNPE_ROOT is not set\) is absent/,
      ),
    );
  } finally {
    await cleanup();
  }
});

test('snpe back-end validates the package first: a shape disagreement surfaces without the SDK', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const path = await snpePackage(dir, 544);
    await assert.rejects(
      SnpeBackend.create({ modelPath: path, inputSize: 640, env: {}, addonPath: join(dir, 'absent.node') }),
      rejectsWith(
        'model_shape_mismatch',
        /package declares \[1,3,544,544\], model file takes unknown \(not readable here\), preprocessing targets \[1,3,640,640\]/,
      ),
    );
    const onnxModel = buildTestDetrModel({ height: 544, width: 544, queries: 4, classes: 23 }).bytes;
    const onnxPath = await writePackage(dir, { modelName: 'm.onnx', model: onnxModel, labels: testLabels(544) }, 'onnx.tar');
    await assert.rejects(SnpeBackend.create({ modelPath: onnxPath, env: {} }), rejectsWith('model_package_invalid', /runs \.dlc models/));
  } finally {
    await cleanup();
  }
});

test('snpe back-end with a DSP test double: config properties reach the runtime, outputs are decoded', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const path = await snpePackage(dir, 544);
    const Q = 6;
    const C = 23;
    const rnd = seededRandom(8);
    const boxes = Float32Array.from({ length: Q * 4 }, () => 0.1 + 0.5 * rnd());
    const logits = Float32Array.from({ length: Q * C }, () => -5 + 7 * rnd());
    const loads: { bytes: number; options: SnpeLoadOptions }[] = [];
    let inputs = 0;
    // Test double for the on-chip runtime, which this machine does not have.
    const dspDouble: SnpeBinding = {
      load(dlc, options) {
        loads.push({ bytes: dlc.length, options });
        return Promise.resolve({
          inputShape: [1, 3, 544, 544],
          execute(input) {
            inputs = input.length;
            return Promise.resolve({ boxes, logits, queries: Q, classes: C });
          },
          release() {},
        });
      },
    };
    const b = await SnpeBackend.create({ modelPath: path, env: {}, binding: dspDouble, scoreThreshold: 0.3 });
    try {
      const dets = await b.detect({ index: 0, timestampMs: 0, width: 640, height: 640, format: 'bgr888', data: testFrameBytes() });
      assert.deepEqual(loads, [{ bytes: 4, options: { runtime: 'dsp', performanceProfile: 'high_performance' } }]);
      assert.equal(inputs, 3 * 544 * 544);
      const identity = Int32Array.from({ length: 23 }, (_, i) => i);
      assert.deepEqual(
        dets,
        decodeReference(boxes, logits, { queries: Q, classes: C, frameWidth: 640, frameHeight: 640, scoreThreshold: 0.3, remap: identity }),
      );
      assert.ok(dets.length > 0);
      assert.equal(b.status().backend, 'snpe');
    } finally {
      await b.close();
    }
    const wrongShape: SnpeBinding = {
      load: () => Promise.resolve({ inputShape: [1, 3, 640, 640], execute: () => Promise.resolve({ boxes, logits, queries: Q, classes: C }), release() {} }),
    };
    await assert.rejects(
      SnpeBackend.create({ modelPath: path, env: {}, binding: wrongShape }),
      rejectsWith('model_shape_mismatch', /model file takes \[1,3,640,640\]/),
    );
  } finally {
    await cleanup();
  }
});

test('snpe back-end on a bare .dlc: a head that is not the production head is refused at the first frame', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    // A bare DLC has no labels.json, so it runs as the production bake; the vendor runtime alone knows its head size.
    const path = join(dir, 'svc_transit.dlc');
    await writeFile(path, Uint8Array.from([1, 2, 3, 4]));
    const Q = 4;
    const headOf = (C: number): SnpeBinding => ({
      // Test double for the on-chip runtime, which this machine does not have.
      load: () =>
        Promise.resolve({
          inputShape: [1, 3, 640, 640],
          execute: () => Promise.resolve({ boxes: new Float32Array(Q * 4).fill(0.4), logits: new Float32Array(Q * C).fill(3), queries: Q, classes: C }),
          release() {},
        }),
    });
    const frame = { index: 0, timestampMs: 0, width: 640, height: 640, format: 'bgr888' as const, data: testFrameBytes() };
    const omni = await SnpeBackend.create({ modelPath: path, env: {}, binding: headOf(15) });
    try {
      await assert.rejects(omni.detect(frame), rejectsWith('model_class_map_unmapped', /svc_transit\.dlc has a 15-class head and no labels\.json/));
    } finally {
      await omni.close();
    }
    const production = await SnpeBackend.create({ modelPath: path, env: {}, binding: headOf(23) });
    try {
      assert.equal((await production.detect(frame)).length, Q * 23);
    } finally {
      await production.close();
    }
  } finally {
    await cleanup();
  }
});

test('snpe back-end: outputs that disagree with their own Q and C are a typed model_package_invalid', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const path = join(dir, 'svc_transit.dlc');
    await writeFile(path, Uint8Array.from([1, 2, 3, 4]));
    // Test double for the on-chip runtime: it reports 4 queries but hands back 3 boxes.
    const broken: SnpeBinding = {
      load: () =>
        Promise.resolve({
          inputShape: [1, 3, 640, 640],
          execute: () => Promise.resolve({ boxes: new Float32Array(3 * 4), logits: new Float32Array(4 * 23), queries: 4, classes: 23 }),
          release() {},
        }),
    };
    const b = await SnpeBackend.create({ modelPath: path, env: {}, binding: broken });
    try {
      const frame = { index: 0, timestampMs: 0, width: 640, height: 640, format: 'bgr888' as const, data: testFrameBytes() };
      await assert.rejects(
        b.detect(frame),
        rejectsWith('model_package_invalid', /svc_transit\.dlc: outputs hold 12 box and 92 logit values, expected Q\*4 = 16 and Q\*C = 92/),
      );
    } finally {
      await b.close();
    }
  } finally {
    await cleanup();
  }
});
