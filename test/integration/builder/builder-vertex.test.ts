/**
 * The vertex executor through Google's client library (`@google-cloud/aiplatform`, its REST
 * transport) up to the request it would send. The edge we cannot reach, Google's service, is a test
 * double: a 127.0.0.1 HTTP server answering JobService CreateCustomJob and GetCustomJob as Vertex AI's
 * REST v1 does. It checks the CustomJob the library sent field by field (machine and accelerator from
 * gpu_type, image, arguments with the dataset URI, epochs, batch size, input size, output folder) and
 * the bearer token the library signed with the service account key the test made (Google's default
 * credentials, GOOGLE_APPLICATION_CREDENTIALS), then the job is followed to TRAINING_COMPLETE.
 * Vertex unreachable (a closed port) and no credentials → FAILED with a typed reason.
 */
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createVerify, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { protos } from '@google-cloud/aiplatform';
import { testBuilder } from './builder-helpers.js';
import { api, waitFor } from '../../support/hub-helpers.js';

let dir: string;
let keyFile: string;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const SA_EMAIL = 'trainer@p1.iam.gserviceaccount.com';
const requests: { method: string; path: string; auth?: string; body: any }[] = [];
const JOB = 'projects/p1/locations/europe-west4/customJobs/42';

/** Test double of Vertex AI's JobService (REST v1): records each request, answers as Vertex does. */
const vertex = createServer((req, res) => {
  let text = '';
  req.on('data', (c: Buffer) => (text += c.toString()));
  req.on('end', () => {
    requests.push({
      method: req.method!,
      path: new URL(req.url!, 'http://x').pathname,
      ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
      body: text ? JSON.parse(text) : undefined,
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.method === 'POST' ? { name: JOB, state: 'JOB_STATE_PENDING' } : { name: JOB, state: 'JOB_STATE_SUCCEEDED' }));
  });
});
let vertexUrl: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lookout-builder-vertex-'));
  keyFile = join(dir, 'service-account.json');
  await writeFile(
    keyFile,
    JSON.stringify({
      type: 'service_account',
      project_id: 'p1',
      private_key_id: 'key-1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      client_email: SA_EMAIL,
      client_id: '1',
      token_uri: 'https://oauth2.googleapis.com/token',
    }),
  );
  await new Promise<void>((r) => vertex.listen(0, '127.0.0.1', r));
  vertexUrl = `http://127.0.0.1:${(vertex.address() as { port: number }).port}`;
});
after(async () => {
  vertex.close();
  await rm(dir, { recursive: true, force: true });
});

const env = (endpoint: string, credentials = keyFile) => ({
  LOOKOUT_BUILDER_VERTEX_PROJECT: 'p1',
  LOOKOUT_BUILDER_VERTEX_LOCATION: 'europe-west4',
  LOOKOUT_BUILDER_VERTEX_IMAGE: 'europe-docker.pkg.dev/p1/lookout/train:1',
  LOOKOUT_BUILDER_VERTEX_OUTPUT: 'gs://lookout-train/jobs',
  LOOKOUT_BUILDER_VERTEX_ENDPOINT: endpoint,
  LOOKOUT_BUILDER_VERTEX_POLL_MS: '20',
  GOOGLE_APPLICATION_CREDENTIALS: credentials,
});
const body = { epochs: 25, batch_size: 8, gpu_type: 'NVIDIA_L4', gcs_dataset: 'gs://lookout-data/gate', recipe: 'rfdetr', executor: 'vertex' };

/** The JWT's claims, once its RS256 signature checks out against the test's service account key. */
function verifiedClaims(auth: string | undefined): Record<string, unknown> {
  const m = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(auth ?? '');
  assert.ok(m, `a bearer JWT: ${auth}`);
  const header = JSON.parse(Buffer.from(m[1], 'base64url').toString());
  assert.deepEqual([header.alg, header.kid], ['RS256', 'key-1']);
  assert.ok(createVerify('RSA-SHA256').update(`${m[1]}.${m[2]}`).verify(publicKey, Buffer.from(m[3], 'base64url')), 'signed by the service account key');
  return JSON.parse(Buffer.from(m[2], 'base64url').toString());
}

async function launchAndWait(url: string, ends: string[]): Promise<any> {
  await api(url, '/api/ontology/compile', { json: {} });
  const r = await api(url, '/api/pipeline/launch', { json: body });
  assert.equal(r.status, 202, r.text);
  return waitFor('vertex job', async () => {
    const j = (await api(url, `/api/pipeline/jobs/${r.body.id}`)).body;
    return ends.includes(j.state) ? j : undefined;
  });
}

test('the vertex executor sends, through Google’s client, the custom job Vertex AI expects and follows it to TRAINING_COMPLETE', async () => {
  const b = await testBuilder(join(dir, 'a'), { env: env(vertexUrl) });
  try {
    const job = await launchAndWait(b.url, ['TRAINING_COMPLETE', 'FAILED']);
    assert.equal(job.state, 'TRAINING_COMPLETE', job.reason);
    assert.equal(job.result.vertex_job, JOB);
    assert.equal(job.result.export_uri, `gs://lookout-train/jobs/${job.id}/model/inference_model.onnx`);

    const create = requests.find((q) => q.method === 'POST')!;
    assert.equal(create.path, '/v1/projects/p1/locations/europe-west4/customJobs');
    const claims = verifiedClaims(create.auth);
    assert.equal(claims.iss, SA_EMAIL);
    assert.ok(Number(claims.exp) > Date.now() / 1000, 'an unexpired token');

    const sent = create.body;
    assert.equal(sent.displayName, `lookout-train-${job.id}`);
    assert.equal(sent.jobSpec.workerPoolSpecs.length, 1);
    const pool = sent.jobSpec.workerPoolSpecs[0];
    // The library sends enums as numbers ($alt=json;enum-encoding=int): NVIDIA_L4 as Vertex numbers it.
    assert.deepEqual(pool.machineSpec, {
      machineType: 'g2-standard-8',
      acceleratorType: protos.google.cloud.aiplatform.v1.AcceleratorType.NVIDIA_L4,
      acceleratorCount: 1,
    });
    assert.equal(pool.replicaCount, '1');
    assert.equal(pool.containerSpec.imageUri, 'europe-docker.pkg.dev/p1/lookout/train:1');
    assert.deepEqual(pool.containerSpec.args, [
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
      '--classes',
      'handgun,rifle,knife,backpack',
    ]);
    assert.deepEqual(pool.containerSpec.env, [{ name: 'LOOKOUT_JOB_ID', value: job.id }]);
    assert.equal(sent.jobSpec.baseOutputDirectory.outputUriPrefix, `gs://lookout-train/jobs/${job.id}`);
    assert.equal(sent.jobSpec.scheduling.timeout, '86400s');

    const poll = requests.find((q) => q.method === 'GET');
    assert.equal(poll?.path, `/v1/${JOB}`);
    assert.equal(verifiedClaims(poll.auth).iss, SA_EMAIL);
    const logs = (await api(b.url, `/api/pipeline/jobs/${job.id}/logs`)).text;
    assert.ok(!logs.includes(create.auth!.slice(7)) && !logs.includes('PRIVATE KEY'), 'neither the token nor the key is logged');
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
    const job = await launchAndWait(b.url, ['FAILED']);
    assert.equal(job.result.error.code, 'training.service_unreachable');
    assert.equal(job.reason, `Vertex AI at ${url} is not reachable from this builder (ECONNREFUSED)`);
  } finally {
    await b.close();
  }
});

test('no Google credentials: the job is FAILED with training.executor_not_configured saying what to set, and nothing is sent', async () => {
  const before = requests.length;
  const missing = join(dir, 'no-such-key.json');
  const b = await testBuilder(join(dir, 'c'), { env: env(vertexUrl, missing) });
  try {
    const job = await launchAndWait(b.url, ['FAILED']);
    assert.equal(job.result.error.code, 'training.executor_not_configured');
    assert.match(job.reason, new RegExp(`no Google credentials \\(GOOGLE_APPLICATION_CREDENTIALS=${missing}: ENOENT`));
    assert.match(job.reason, /set GOOGLE_APPLICATION_CREDENTIALS to a service account key file/);
    assert.equal(requests.length, before);
  } finally {
    await b.close();
  }
});

test('plain http to another machine is refused at launch: credentials never cross a network in clear', async () => {
  const b = await testBuilder(join(dir, 'd'), { env: env('http://vertex.example.com') });
  try {
    await api(b.url, '/api/ontology/compile', { json: {} });
    const r = await api(b.url, '/api/pipeline/launch', { json: body });
    assert.equal(r.body.error.code, 'training.executor_not_configured');
    assert.match(r.body.error.message, /plain http to another machine; use https/);
  } finally {
    await b.close();
  }
});

test('Vertex AI refusing the job (403 PERMISSION_DENIED): FAILED with training.service_failed and Google’s reason', async () => {
  // Test double of Vertex AI refusing: Google's REST error body.
  const refusing = createServer((req, res) => {
    req.resume();
    res.writeHead(403, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 403, message: "Permission 'aiplatform.customJobs.create' denied", status: 'PERMISSION_DENIED' } }));
  });
  await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r));
  const b = await testBuilder(join(dir, 'e'), { env: env(`http://127.0.0.1:${(refusing.address() as { port: number }).port}`) });
  try {
    const job = await launchAndWait(b.url, ['FAILED']);
    assert.equal(job.result.error.code, 'training.service_failed');
    assert.equal(job.reason, "Vertex AI refused the custom job: PERMISSION_DENIED: Permission 'aiplatform.customJobs.create' denied");
  } finally {
    await b.close();
    refusing.close();
  }
});
