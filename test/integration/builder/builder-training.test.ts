/**
 * Stage 3 through real HTTP on 127.0.0.1 with SQLite in a temp dir: the local executor running the
 * test-double recipe (a real child process writing a real ONNX) to TRAINING_COMPLETE, a failing
 * recipe to FAILED with its reason, a cancel, the time limit, a missing Python env naming its setup
 * script, and a builder restart mid-job (the running job FAILED with why, the queued one resumed).
 */
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { testBuilder } from './builder-helpers.js';
import { api, waitFor } from '../../support/hub-helpers.js';
import type { RunningBuilder } from '../../../builder/src/start-builder.js';

let dir: string;
let builder: RunningBuilder;
let dataset: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lookout-builder-train-'));
  dataset = join(dir, 'imports', 'gate');
  await mkdir(dataset, { recursive: true });
  builder = await testBuilder(join(dir, 'data'), { env: { LOOKOUT_BUILDER_KILL_GRACE_MS: '500', LOOKOUT_BUILDER_MAX_TRAINING: '2' } });
  assert.equal((await api(builder.url, '/api/ontology/compile', { json: {} })).status, 201);
});
after(async () => {
  await builder?.close();
  await rm(dir, { recursive: true, force: true });
});

async function settled(base: string, id: string, timeoutMs = 30_000): Promise<any> {
  return waitFor(
    `job ${id} settled`,
    async () => {
      const j = (await api(base, `/api/pipeline/jobs/${id}`)).body;
      return ['TRAINING_COMPLETE', 'COMPILE_COMPLETE', 'DEPLOYED', 'FAILED'].includes(j.state) ? j : undefined;
    },
    timeoutMs,
  );
}

const launch = (base: string, extra: Record<string, unknown> = {}) =>
  api(base, '/api/pipeline/launch', { json: { epochs: 3, batch_size: 8, gpu_type: 'NVIDIA_TESLA_T4', gcs_dataset: dataset, recipe: 'test-double', ...extra } });

test('a job through the local executor reaches TRAINING_COMPLETE with its logs, progress, metrics and a 1x3x544x544 ONNX', async () => {
  const started = await launch(builder.url);
  assert.equal(started.status, 202, started.text);
  assert.ok(['QUEUED', 'TRAINING'].includes(started.body.state));
  assert.equal(started.body.executor, 'local');
  const job = await settled(builder.url, started.body.id);
  assert.equal(job.state, 'TRAINING_COMPLETE', job.reason);
  assert.equal(job.progress, 1);
  assert.match(job.progress_note, /^epoch 3\/3: loss/);
  assert.deepEqual(job.result.input_shape, [1, 3, 544, 544]);
  assert.ok(job.result.metrics.loss < 1, 'the last epoch’s loss is in the result');
  assert.match(job.result.ontology_hash, /^sha256:/);
  // The export is a real model onnxruntime runs.
  const session = await ort.InferenceSession.create(job.result.onnx_path);
  const out = await session.run({ input: new ort.Tensor('float32', new Float32Array(3 * 544 * 544).fill(0.5), [1, 3, 544, 544]) });
  assert.deepEqual(out.labels.dims, [1, 20, 4]);
  await session.release();
  const logs = (await api(builder.url, `/api/pipeline/jobs/${job.id}/logs`)).body.lines.map((l: any) => `${l.stream} ${l.line}`);
  assert.ok(logs.includes('event TRAINING'));
  assert.ok(logs.some((l: string) => l.startsWith('stdout test-double recipe: 3 epochs')));
  assert.ok(logs.some((l: string) => l.startsWith('stdout LOOKOUT_PROGRESS {"epoch":2')));
  assert.equal(logs.at(-1), 'event TRAINING_COMPLETE');
});

test('a recipe that fails ends FAILED with its last error line as the reason', async () => {
  const started = await launch(builder.url, { options: { fail_at_epoch: 2 } });
  const job = await settled(builder.url, started.body.id);
  assert.equal(job.state, 'FAILED');
  assert.equal(job.reason, 'recipe test-double exited with 1: loss diverged (NaN) at epoch 2');
  assert.equal(job.result.error.code, 'training.recipe_failed');

  const missing = await settled(builder.url, (await launch(builder.url, { gcs_dataset: join(dir, 'imports', 'nowhere') })).body.id);
  assert.match(missing.reason, /dataset .*nowhere is not a folder on this machine/);
});

test('an export of another shape than declared fails the job naming both shapes', async () => {
  const job = await settled(builder.url, (await launch(builder.url, { options: { export_size: 640 } })).body.id);
  assert.equal(job.state, 'FAILED');
  assert.equal(job.reason, "the export's input is 1x3x640x640; the job declared 1x3x544x544");
});

test('a cancelled job stops its recipe and ends FAILED "cancelled"; a time limit stops it too', async () => {
  const started = await launch(builder.url, { epochs: 1000, options: { epoch_ms: 50 } });
  await waitFor('training', async () => (await api(builder.url, `/api/pipeline/jobs/${started.body.id}`)).body.progress > 0);
  const cancelled = await api(builder.url, `/api/pipeline/jobs/${started.body.id}/cancel`, { method: 'POST' });
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.equal(cancelled.body.state, 'FAILED');
  assert.equal(cancelled.body.reason, 'cancelled by the user');
  assert.equal((await api(builder.url, `/api/pipeline/jobs/${started.body.id}/cancel`, { method: 'POST' })).body.error.code, 'training.not_cancellable');

  const limited = await settled(builder.url, (await launch(builder.url, { epochs: 1000, time_limit_s: 1, options: { epoch_ms: 50 } })).body.id);
  assert.equal(limited.reason, 'the job ran past its time limit of 1 s and was stopped');
});

test('launch refusals: the rfdetr recipe without its Python env names the setup script; unknown recipe; cloud data on local', async () => {
  const py = await launch(builder.url, { recipe: 'rfdetr' });
  assert.equal(py.status, 503);
  assert.equal(py.body.error.code, 'training.recipe_env_missing');
  assert.match(py.body.error.message, /scripts\/setup-rfdetr-env\.sh/);
  assert.equal((await launch(builder.url, { recipe: 'nope' })).body.error.code, 'training.recipe_unknown');
  assert.equal((await launch(builder.url, { gcs_dataset: 'gs://bucket/gate' })).body.error.code, 'training.dataset_not_local');
  assert.equal((await launch(builder.url, { input_size: 500 })).status, 400, 'a side not a multiple of 32');
});

test('a restart mid-job: the running local job is FAILED with why, the queued one runs after the restart', async () => {
  const data = join(dir, 'restart');
  const env = { LOOKOUT_BUILDER_MAX_TRAINING: '1', LOOKOUT_BUILDER_KILL_GRACE_MS: '500' };
  let b = await testBuilder(data, { env });
  await api(b.url, '/api/ontology/compile', { json: {} });
  const long = (await launch(b.url, { epochs: 1000, options: { epoch_ms: 50 } })).body;
  const queued = (await launch(b.url, { epochs: 2 })).body;
  await waitFor('training', async () => (await api(b.url, `/api/pipeline/jobs/${long.id}`)).body.progress > 0);
  assert.equal((await api(b.url, `/api/pipeline/jobs/${queued.id}`)).body.state, 'QUEUED');
  await b.close();
  b = await testBuilder(data, { env });
  try {
    const cut = (await api(b.url, `/api/pipeline/jobs/${long.id}`)).body;
    assert.equal(cut.state, 'FAILED');
    assert.match(cut.reason, /the builder stopped while the local recipe ran/);
    assert.equal((await settled(b.url, queued.id)).state, 'TRAINING_COMPLETE');
  } finally {
    await b.close();
  }
});
