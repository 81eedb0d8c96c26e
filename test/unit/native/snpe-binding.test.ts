/**
 * The detector's side of the on-chip binding. The DSP and the vendor SDK are not on this machine, so
 * the addon's `snpe` module is a test double here (the edge of the world); what is tested is ours:
 * the production bake's [1, 640, 640, 3] BGR888 input is taken as [1, 3, 640, 640] for the package's
 * checks and fed the frame's bytes as they are, outputs are found by name, and the addon built
 * without the SDK (this machine's) makes the back-end refuse, naming SNPE_ROOT.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { isLookoutError } from '../../../core/src/index.js';
import { nativeStatus } from '../../../native/ts/index.js';
import { SnpeBackend, loadSnpeBinding } from '../../../plugins/detector/src/backends/snpe-backend.js';
import { nativeSnpeBinding, type NativeSnpeModule } from '../../../plugins/detector/src/backends/snpe-native.js';
import { decodeReference } from '../../../plugins/detector/src/model/decode-reference.js';
import { seededRandom, testConfig, testFrameBytes, writePackage } from '../../support/onnx-model.js';
import { scratchDir } from '../../support/scratch-dir.js';

const Q = 5;
const C = 23;

/** Test double of the addon's snpe module for a DLC of the given input dims; records what it was fed. */
function dspDouble(inputDims: number[], fed: (Float32Array | Uint8Array)[]): NativeSnpeModule {
  const rnd = seededRandom(22);
  const boxes = Float32Array.from({ length: Q * 4 }, () => 0.1 + 0.5 * rnd());
  const logits = Float32Array.from({ length: Q * C }, () => -4 + 7 * rnd());
  return {
    load: (_dlc, runtime, profile) => {
      assert.deepEqual([runtime, profile], ['dsp', 'high_performance']);
      return Promise.resolve({
        inputDims,
        inputLayout: inputDims[3] === 3 ? 'nhwc_bgr_uint8' : 'nchw_float32',
        outputs: [
          { name: 'labels', dims: [1, Q, C] },
          { name: 'dets', dims: [1, Q, 4] },
        ],
        execute: (input) => {
          fed.push(input);
          return Promise.resolve({ dets: boxes, labels: logits });
        },
        release: () => {},
      });
    },
  };
}

test('the production bake: a [1, 640, 640, 3] DLC gets the 640 frame as BGR888 bytes, and its outputs are decoded', async () => {
  const { dir, cleanup } = await scratchDir('lookout-snpe-');
  try {
    // A bare production .dlc (deployed as svc_transit.dlc): no labels.json, no config.json, the production head.
    const path = join(dir, 'svc_transit.dlc');
    await writeFile(path, Uint8Array.of(1, 2, 3));
    const fed: (Float32Array | Uint8Array)[] = [];
    const backend = await SnpeBackend.create({ modelPath: path, env: {}, binding: nativeSnpeBinding(dspDouble([1, 640, 640, 3], fed)) });
    try {
      assert.deepEqual(backend.status().inputShape, [1, 3, 640, 640]);
      const frame = testFrameBytes(640, 640, 9);
      const dets = await backend.detect({ index: 0, timestampMs: 0, width: 640, height: 640, format: 'bgr888', data: frame });
      assert.equal(fed.length, 1);
      assert.ok(fed[0] instanceof Uint8Array && !(fed[0] instanceof Float32Array));
      assert.deepEqual(fed[0], frame, 'the substream as it is');
      const out = await dspDouble([1, 640, 640, 3], []).load(new Uint8Array(0), 'dsp', 'high_performance');
      const raw = await out.execute(new Uint8Array(0));
      assert.deepEqual(
        dets,
        decodeReference(raw.dets, raw.labels, {
          queries: Q,
          classes: C,
          frameWidth: 640,
          frameHeight: 640,
          remap: Int32Array.from({ length: 23 }, (_, i) => i),
        }),
      );
    } finally {
      await backend.close();
    }
  } finally {
    await cleanup();
  }
});

test('a compiled package: a [1, 3, 544, 544] DLC gets normalized float32 NCHW', async () => {
  const { dir, cleanup } = await scratchDir('lookout-snpe-');
  try {
    const path = await writePackage(
      dir,
      { modelName: 'rf_detr_qcs8550.dlc', model: Uint8Array.of(1), config: testConfig('rf_detr_qcs8550.dlc', 'snpe') },
      'rf_detr_edge4.tar',
    );
    const fed: (Float32Array | Uint8Array)[] = [];
    const backend = await SnpeBackend.create({ modelPath: path, env: {}, binding: nativeSnpeBinding(dspDouble([1, 3, 544, 544], fed)) });
    try {
      await backend.detect({ index: 0, timestampMs: 0, width: 640, height: 640, format: 'bgr888', data: testFrameBytes(640, 640, 2) });
      assert.ok(fed[0] instanceof Float32Array);
      assert.equal(fed[0].length, 3 * 544 * 544);
    } finally {
      await backend.close();
    }
  } finally {
    await cleanup();
  }
});

test('the addon built here (no vendor SDK) makes the snpe back-end refuse, naming SNPE_ROOT', () => {
  assert.equal(nativeStatus().implementation, process.env.LOOKOUT_NATIVE === '0' ? 'typescript' : 'native');
  assert.throws(
    () => loadSnpeBinding(undefined, {}),
    (e) =>
      isLookoutError(e, 'backend_unavailable') && /was built without the vendor SNPE SDK \(SNPE_ROOT is not set\); use RF_DETR_BACKEND=onnx/.test(e.message),
  );
});
