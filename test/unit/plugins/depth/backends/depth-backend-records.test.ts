import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { inferenceKit } from '../../../../../plugins/detector/src/inference-kit.js';
import type { DepthBackend } from '../../../../../plugins/depth/src/backends/depth-backend.js';
import type { DepthBackendRecord, DepthOpenOptions } from '../../../../../plugins/depth/src/backends/depth-backend-record.js';
import {
  DEPTH_BACKENDS,
  DEPTH_BACKEND_NAMES,
  depthBackendForModel,
  depthBackendForSimulatedFrames,
  depthBackendRecord,
} from '../../../../../plugins/depth/src/backends/depth-backend-records.js';
import { openDepthBackend } from '../../../../../plugins/depth/src/backends/open-depth-backend.js';
import { SimDepthBackend } from '../../../../../plugins/depth/src/backends/sim-depth-backend.js';
import { DepthConfigSchema } from '../../../../../plugins/depth/src/index.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

const records: readonly DepthBackendRecord[] = DEPTH_BACKENDS;
const recordNames = records.map((r) => r.name);

function namesEveryBackend(err: unknown): boolean {
  assert.ok(isLookoutError(err, 'config_invalid'));
  for (const name of recordNames) assert.ok(err.message.includes(name), `${err.message} names ${name}`);
  return true;
}

async function withSpy(record: DepthBackendRecord, run: (calls: DepthOpenOptions[]) => Promise<void>): Promise<void> {
  const calls: DepthOpenOptions[] = [];
  const original = Object.getOwnPropertyDescriptor(record, 'open')!;
  const mutable = record as { open: DepthBackendRecord['open'] };
  mutable.open = (options) => {
    calls.push(options);
    return Promise.resolve({
      name: record.name,
      source: 'spy',
      estimate: () => assert.fail('not used'),
      close: () => Promise.resolve(),
    } as unknown as DepthBackend);
  };
  try {
    await run(calls);
  } finally {
    Object.defineProperty(record, 'open', original);
  }
}

test('depth: the back-end names and MONO_DEPTH_BACKEND come from the records', () => {
  assert.deepEqual(recordNames, ['onnx', 'sim']);
  assert.deepEqual([...DEPTH_BACKEND_NAMES], recordNames);
  assert.deepEqual(DepthConfigSchema.shape.MONO_DEPTH_BACKEND.unwrap().options, recordNames);
  for (const name of recordNames) assert.equal(DepthConfigSchema.safeParse({ MONO_DEPTH_BACKEND: name }).success, true, name);
  assert.equal(DepthConfigSchema.safeParse({ MONO_DEPTH_BACKEND: 'midas' }).success, false);
  for (const r of records) {
    assert.ok(r.description.length > 0);
    assert.equal(r.capabilities.needsModel, r.capabilities.modelFormats.length > 0, r.name);
    assert.ok(r.statusFields.includes('name') && r.statusFields.includes('source'), r.name);
  }
  assert.equal(new SimDepthBackend().name, depthBackendRecord('sim').name);
  assert.equal(depthBackendForModel('/data/models/mono_depth.onnx')?.name, 'onnx');
  assert.equal(depthBackendForSimulatedFrames()?.name, 'sim');
  assert.throws(() => depthBackendRecord('midas'), namesEveryBackend);
});

test('depth: openDepthBackend opens through the records and checks what each needs', async () => {
  const scratch = await scratchDir('lookout-depth-records-');
  const dir = scratch.dir;
  try {
    for (const record of records) {
      await withSpy(record, async (calls) => {
        const base = { kit: inferenceKit, dataDir: dir, backend: record.name as never, scale: 2 };
        const opened = await openDepthBackend({ ...base, modelPath: '/data/models/d.onnx', simSource: true });
        assert.equal(opened.backend.name, record.name);
        assert.equal(calls.length, 1, `${record.name}: its record opened it`);
        assert.equal(calls[0].scale, 2);
        assert.equal(calls[0].threads, 1);
        assert.match(calls[0].modelPath ?? '', /data\/models\/d\.onnx$/);
        if (record.capabilities.needsModel) {
          await assert.rejects(
            openDepthBackend({ ...base, simSource: true }),
            (e) => isLookoutError(e, 'config_invalid') && e.message.includes(`MONO_DEPTH_BACKEND=${record.name} needs MONO_DEPTH_MODEL_PATH`),
          );
        }
        if (record.capabilities.needsSimulatedFrames) {
          await assert.rejects(
            openDepthBackend({ ...base, simSource: false }),
            (e) => isLookoutError(e, 'backend_unavailable') && e.message.includes(`MONO_DEPTH_BACKEND=${record.name} needs the simulated frame source`),
          );
        }
        assert.equal(calls.length, 1, 'a refused back-end is not opened');
      });
    }
    await assert.rejects(openDepthBackend({ kit: inferenceKit, dataDir: dir, backend: 'midas' as never, simSource: true }), namesEveryBackend);
  } finally {
    await scratch.cleanup();
  }
});
