/**
 * The vertex executor over real HTTP: the custom job request as Vertex AI's REST v1 expects it (sent
 * to a 127.0.0.1 server in Vertex's place: path, bearer token, machine and accelerator from gpu_type,
 * the dataset URI), followed to TRAINING_COMPLETE; and Vertex unreachable → FAILED, typed.
 */
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testBuilder } from './builder-helpers.js';
import { api, waitFor } from '../../support/hub-helpers.js';

let dir: string;
const requests: { method: string; url: string; auth?: string; body: any }[] = [];
const vertex = createServer((req, res) => {
  let text = '';
  req.on('data', (c: Buffer) => (text += c.toString()));
  req.on('end', () => {
    requests.push({
      method: req.method!,
      url: req.url!,
      ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
      body: text ? JSON.parse(text) : undefined,
    });
    const name = 'projects/p1/locations/europe-west4/customJobs/42';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.method === 'POST' ? { name, state: 'JOB_STATE_PENDING' } : { name, state: 'JOB_STATE_SUCCEEDED' }));
  });
});
let vertexUrl: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lookout-builder-vertex-'));
  await new Promise<void>((r) => vertex.listen(0, '127.0.0.1', r));
  vertexUrl = `http://127.0.0.1:${(vertex.address() as { port: number }).port}`;
});
after(async () => {
  vertex.close();
  await rm(dir, { recursive: true, force: true });
});

const env = (endpoint: string) => ({
  LOOKOUT_BUILDER_VERTEX_PROJECT: 'p1',
  LOOKOUT_BUILDER_VERTEX_LOCATION: 'europe-west4',
  LOOKOUT_BUILDER_VERTEX_IMAGE: 'europe-docker.pkg.dev/p1/lookout/train:1',
  LOOKOUT_BUILDER_VERTEX_OUTPUT: 'gs://lookout-train/jobs',
  LOOKOUT_BUILDER_VERTEX_TOKEN: 'ya29.vertex-token',
  LOOKOUT_BUILDER_VERTEX_ENDPOINT: endpoint,
  LOOKOUT_BUILDER_VERTEX_POLL_MS: '20',
});
const body = { epochs: 25, batch_size: 8, gpu_type: 'NVIDIA_L4', gcs_dataset: 'gs://lookout-data/gate', recipe: 'rfdetr', executor: 'vertex' };

test('the vertex executor sends the custom job Vertex AI expects and follows it to TRAINING_COMPLETE', async () => {
  const b = await testBuilder(join(dir, 'a'), { env: env(vertexUrl) });
  try {
    await api(b.url, '/api/ontology/compile', { json: {} });
    const r = await api(b.url, '/api/pipeline/launch', { json: body });
    assert.equal(r.status, 202, r.text);
    const job = await waitFor('vertex job', async () => {
      const j = (await api(b.url, `/api/pipeline/jobs/${r.body.id}`)).body;
      return j.state === 'TRAINING_COMPLETE' || j.state === 'FAILED' ? j : undefined;
    });
    assert.equal(job.state, 'TRAINING_COMPLETE', job.reason);
    assert.equal(job.result.vertex_job, 'projects/p1/locations/europe-west4/customJobs/42');
    assert.equal(job.result.export_uri, `gs://lookout-train/jobs/${job.id}/model/inference_model.onnx`);
    const create = requests.find((q) => q.method === 'POST')!;
    assert.equal(create.url, '/v1/projects/p1/locations/europe-west4/customJobs');
    assert.equal(create.auth, 'Bearer ya29.vertex-token');
    const pool = create.body.jobSpec.workerPoolSpecs[0];
    assert.deepEqual(pool.machineSpec, { machineType: 'g2-standard-8', acceleratorType: 'NVIDIA_L4', acceleratorCount: 1 });
    assert.equal(pool.replicaCount, '1');
    assert.equal(pool.containerSpec.imageUri, 'europe-docker.pkg.dev/p1/lookout/train:1');
    assert.deepEqual(pool.containerSpec.args.slice(0, 10), [
      '--recipe',
      'rfdetr',
      '--dataset',
      'gs://lookout-data/gate',
      '--epochs',
      '25',
      '--batch-size',
      '8',
      '--input-size',
      '544',
    ]);
    assert.equal(create.body.jobSpec.baseOutputDirectory.outputUriPrefix, `gs://lookout-train/jobs/${job.id}`);
    assert.equal(create.body.displayName, `lookout-train-${job.id}`);
    assert.ok(requests.some((q) => q.method === 'GET' && q.url === '/v1/projects/p1/locations/europe-west4/customJobs/42'));
    assert.ok(!(await api(b.url, `/api/pipeline/jobs/${job.id}/logs`)).text.includes('ya29.vertex-token'), 'the token is never logged');
    assert.equal((await api(b.url, '/api/pipeline/launch', { json: { ...body, gpu_type: 'NVIDIA_GTX_1080' } })).body.error.code, 'training.gpu_type_unknown');
  } finally {
    await b.close();
  }
});

test('Vertex AI unreachable here: the job is FAILED with training.service_unreachable naming the endpoint', async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
  await new Promise((r) => closed.close(r));
  const b = await testBuilder(join(dir, 'b'), { env: env(url) });
  try {
    await api(b.url, '/api/ontology/compile', { json: {} });
    const r = await api(b.url, '/api/pipeline/launch', { json: body });
    const job = await waitFor('vertex job', async () => {
      const j = (await api(b.url, `/api/pipeline/jobs/${r.body.id}`)).body;
      return j.state === 'FAILED' ? j : undefined;
    });
    assert.equal(job.result.error.code, 'training.service_unreachable');
    assert.equal(job.reason, `Vertex AI at ${url} is not reachable from this builder (ECONNREFUSED)`);
  } finally {
    await b.close();
  }
});
