import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Frame } from '../../../../plugins/camera/src/service.js';
import { SimDetectorBackend } from '../../../../plugins/detector/src/backends/sim-backend.js';
import { Pipeline } from '../../../../plugins/detector/src/pipeline.js';

const frame: Frame = {
  index: 0,
  timestampMs: 0,
  width: 640,
  height: 640,
  format: 'bgr888',
  data: new Uint8Array(640 * 640 * 3),
  truth: [{ id: 1, classId: 0, label: 'person', box: [100, 100, 160, 300], depthM: 6, visibility: 1 }],
};

test('a stage removed while a frame is in the pipeline is not called for that frame (its plugin has stopped)', async () => {
  const pipeline = new Pipeline(new SimDetectorBackend({ boxJitterPx: 0, missProbability: 0, falsePositiveRate: 0 }));
  let laterCalls = 0;
  // The loader stops depth (and releases its model) while the detector's frame is still running.
  const removeLater = pipeline.addStage({ name: 'depth', order: 20, process: (dets) => (laterCalls++, dets) });
  pipeline.addStage({ name: 'tracker', order: 10, process: (dets) => (removeLater(), dets) });
  const dets = await pipeline.process(frame);
  assert.equal(dets.length, 1);
  assert.equal(laterCalls, 0);
  assert.deepEqual(pipeline.stageNames(), ['tracker']);
});
