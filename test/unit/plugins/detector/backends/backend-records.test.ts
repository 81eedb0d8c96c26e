import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import type { DetectorBackend } from '../../../../../plugins/detector/src/backends/backend.js';
import type { BackendOpenOptions, DetectorBackendRecord } from '../../../../../plugins/detector/src/backends/backend-record.js';
import {
  BACKEND_NAMES,
  DETECTOR_BACKENDS,
  MODEL_BACKEND_NAMES,
  backendForFormat,
  backendRecord,
  defaultBackendName,
  describeDefaultChoice,
  localAlternatives,
  parseBackendName,
} from '../../../../../plugins/detector/src/backends/backend-records.js';
import { createBackend } from '../../../../../plugins/detector/src/backends/create-backend.js';
import { SimDetectorBackend } from '../../../../../plugins/detector/src/backends/sim-backend.js';
import { DetectorConfigSchema } from '../../../../../plugins/detector/src/config.js';
import { RfdetrStatusSchema } from '../../../../../plugins/detector/src/index.js';
import { PackageConfigSchema } from '../../../../../plugins/detector/src/model/package-schema.js';

const records: readonly DetectorBackendRecord[] = DETECTOR_BACKENDS;
const recordNames = records.map((r) => r.name);

/** The config error for an unknown name lists every back-end the records declare. */
function namesEveryBackend(err: unknown): boolean {
  assert.ok(isLookoutError(err, 'config_invalid'));
  for (const name of recordNames) assert.ok(err.message.includes(name), `${err.message} names ${name}`);
  return true;
}

/** Replaces a record's factory for the duration of `run`, recording what it was given. */
async function withSpy(record: DetectorBackendRecord, run: (calls: BackendOpenOptions[]) => Promise<void>): Promise<void> {
  const calls: BackendOpenOptions[] = [];
  const original = Object.getOwnPropertyDescriptor(record, 'open')!;
  const mutable = record as { open: DetectorBackendRecord['open'] };
  mutable.open = (options) => {
    calls.push(options);
    return Promise.resolve({
      name: record.name,
      status: () => assert.fail('not used'),
      detect: () => Promise.resolve([]),
      close: () => Promise.resolve(),
    } as unknown as DetectorBackend);
  };
  try {
    await run(calls);
  } finally {
    Object.defineProperty(record, 'open', original);
  }
}

test('the back-end names, the config enum, the status enum and the package runtimes all come from the records', () => {
  assert.deepEqual(recordNames, ['snpe', 'onnx', 'sim']);
  assert.deepEqual([...BACKEND_NAMES], recordNames);
  assert.equal(new Set(recordNames).size, recordNames.length, 'names are unique');

  assert.deepEqual(DetectorConfigSchema.shape.RF_DETR_BACKEND.unwrap().options, recordNames);
  assert.deepEqual(RfdetrStatusSchema.shape.backend.unwrap().options, recordNames);
  const runtimes = records.filter((r) => r.capabilities.modelFormats.length > 0).map((r) => r.name);
  assert.deepEqual([...MODEL_BACKEND_NAMES], runtimes);
  assert.deepEqual(PackageConfigSchema.shape.backend.options, runtimes);

  for (const name of recordNames) {
    assert.equal(DetectorConfigSchema.safeParse({ RF_DETR_BACKEND: name }).success, true, name);
    assert.equal(RfdetrStatusSchema.shape.backend.safeParse(name).success, true, name);
  }
  assert.equal(DetectorConfigSchema.safeParse({ RF_DETR_BACKEND: 'tensorrt' }).success, false);
  assert.equal(RfdetrStatusSchema.shape.backend.safeParse(null).success, true);
  // The config documents the default choice as it did when it was written by hand.
  assert.equal(describeDefaultChoice(), 'onnx or snpe from the model file, sim when no model is given');
});

test('each record is whole and its capabilities agree with one another', () => {
  for (const r of records) {
    assert.ok(r.description.length > 0, `${r.name} has a description`);
    assert.equal(typeof r.open, 'function');
    assert.equal(r.capabilities.needsModel, r.capabilities.modelFormats.length > 0, `${r.name}: needs a model exactly when it runs a model format`);
    assert.ok(['this-machine', 'dsp-addon'].includes(r.capabilities.runsOn));
    assert.ok(r.statusFields.includes('backend'), `${r.name} reports its name`);
  }
  assert.equal(records.filter((r) => r.capabilities.fleetDefault).length, 1, 'one fleet default');
  assert.equal(records.filter((r) => !r.capabilities.needsModel).length >= 1, true, 'one back-end runs without a model');
  assert.equal(backendForFormat('onnx')?.name, 'onnx');
  assert.equal(backendForFormat('dlc')?.name, 'snpe');
  assert.equal(
    localAlternatives(),
    'RF_DETR_BACKEND=onnx with an .onnx export, or RF_DETR_BACKEND=sim',
    'the advice of a back-end that cannot run here names those that can',
  );
});

test('status fields: the sim back-end fills exactly the fields its record lists; model back-ends list them all', () => {
  const sim = backendRecord('sim');
  const status = new SimDetectorBackend().status() as unknown as Record<string, unknown>;
  const filled = Object.keys(status).filter((k) => status[k] !== null);
  assert.deepEqual([...filled].sort(), [...sim.statusFields].sort());
  for (const r of records.filter((x) => x.capabilities.needsModel)) assert.deepEqual([...r.statusFields].sort(), Object.keys(status).sort(), r.name);
});

test('the back-end classes take their names from their records', async () => {
  const sim = await createBackend('sim', { env: {} });
  assert.equal(sim.name, backendRecord('sim').name);
  assert.equal(sim.status().backend, sim.name);
  await sim.close();
});

test('the factory dispatches through the records: each record opens its own back-end, a model back-end only with a model', async () => {
  for (const record of records) {
    await withSpy(record, async (calls) => {
      const backend = await createBackend(record.name as never, { modelPath: '/data/models/m.bin', env: { A: '1' }, topK: 7 });
      assert.equal(backend.name, record.name);
      assert.equal(calls.length, 1, `${record.name}: its record opened it`);
      assert.equal(calls[0].modelPath, '/data/models/m.bin');
      assert.equal(calls[0].topK, 7);
      assert.deepEqual(calls[0].env, { A: '1' });
      if (record.capabilities.needsModel) {
        // The model path from the env, else a refusal before the record is asked.
        await createBackend(record.name as never, { env: { RF_DETR_EDGE4_MODEL: '/data/models/e4.tar' } });
        assert.equal(calls[1].modelPath, '/data/models/e4.tar');
        await assert.rejects(createBackend(record.name as never, { env: {} }), (err: unknown) => {
          assert.ok(isLookoutError(err, 'config_invalid'));
          assert.match(err.message, new RegExp(`RF_DETR_BACKEND=${record.name} needs a model: set RF_DETR_MODEL_PATH or RF_DETR_EDGE4_MODEL`));
          return true;
        });
        assert.equal(calls.length, 2);
      } else {
        await createBackend(record.name as never, { env: {} });
        assert.equal(calls[1].modelPath, null);
      }
    });
  }
});

test('an unknown back-end name is refused, naming the valid ones', async () => {
  assert.throws(() => parseBackendName('tensorrt'), namesEveryBackend);
  assert.throws(() => parseBackendName(undefined), namesEveryBackend);
  assert.throws(() => backendRecord('tensorrt'), namesEveryBackend);
  await assert.rejects(createBackend('tensorrt' as never, { modelPath: '/m.onnx', env: {} }), namesEveryBackend);
  for (const name of recordNames) assert.equal(parseBackendName(` ${name.toUpperCase()} `), name);
});

test('the default choice follows the records: by model file extension, the fleet default for a package, no model for none', () => {
  assert.equal(defaultBackendName(null), 'sim');
  assert.equal(defaultBackendName('/data/models/rf_detr.onnx'), 'onnx');
  assert.equal(defaultBackendName('/data/models/rf_detr_qcs8550.dlc'), 'snpe');
  assert.equal(defaultBackendName('/data/models/rf_detr_edge4.tar'), 'snpe');
  // As before the records: the extension match is exact, anything else is a package.
  assert.equal(defaultBackendName('/data/models/RF_DETR.ONNX'), 'snpe');
});
