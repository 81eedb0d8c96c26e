/**
 * Stage 4 over real HTTP on 127.0.0.1: the export-shape check (a 640 export refused for the 544
 * target, naming both), the vendor compile unreachable → FAILED with a clear reason, a compile
 * against a 127.0.0.1 service standing in for the vendor (the request it gets: options, token), the
 * token in no answer or log, TrOCR as two jobs, and a Track L artifact refused.
 */
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testBuilder } from './builder-helpers.js';
import { api, waitFor } from '../../support/hub-helpers.js';
import { buildTestDetrModel, writeBareModel } from '../../support/onnx-model.js';
import type { RunningBuilder } from '../../../builder/src/start-builder.js';

const TOKEN = 'compile-secret-4b1d';
let dir: string;
let models: string;
const received: { headers: IncomingMessage['headers']; bytes: number }[] = [];
const vendor = createServer((req, res) => {
  let bytes = 0;
  req.on('data', (c: Buffer) => (bytes += c.length));
  req.on('end', () => {
    received.push({ headers: req.headers, bytes });
    if (req.headers.authorization !== `Token ${TOKEN}`) return void res.writeHead(401).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from(`DLC of ${bytes} bytes`));
  });
});
let vendorUrl: string;
let closedUrl: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lookout-builder-compile-'));
  models = join(dir, 'data', 'models');
  for (const [name, side] of [
    ['export-544.onnx', 544],
    ['export-640.onnx', 640],
    ['trocr-encoder.onnx', 384],
    ['trocr-decoder.onnx', 32],
  ] as const) {
    await writeBareModel(models, name, buildTestDetrModel({ height: side, width: side, queries: 4, classes: 4 }).bytes);
  }
  await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
  vendorUrl = `http://127.0.0.1:${(vendor.address() as { port: number }).port}`;
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  closedUrl = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
  await new Promise((r) => closed.close(r));
});
after(async () => {
  vendor.close();
  await rm(dir, { recursive: true, force: true });
});

async function withBuilder(url: string, fn: (b: RunningBuilder) => Promise<void>): Promise<void> {
  const b = await testBuilder(join(dir, 'data'), { env: { COMPILE_SERVICE_TOKEN: TOKEN, LOOKOUT_BUILDER_COMPILE_URL: url } });
  try {
    await fn(b);
  } finally {
    await b.close();
  }
}

const settled = (b: RunningBuilder, id: string) =>
  waitFor(`compile ${id}`, async () => {
    const j = (await api(b.url, `/api/pipeline/jobs/${id}`)).body;
    return j.state === 'COMPILING' ? undefined : j;
  });

test('a 640 export is refused for the 544 compile target, naming both shapes; no job is made', async () => {
  await withBuilder(vendorUrl, async (b) => {
    const before = received.length;
    const r = await api(b.url, '/api/pipeline/compile', { json: { onnx_path: join(models, 'export-640.onnx'), input_size: 544 } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'model_shape_mismatch');
    assert.match(r.body.error.message, /the export's input is 1x3x640x640; the compile target is 1x3x544x544/);
    assert.equal(received.length, before, 'nothing reached the compile service');
    assert.equal((await api(b.url, '/api/pipeline/jobs?kind=compile')).body.jobs.length, 0);
    assert.equal((await api(b.url, '/api/pipeline/compile', { json: { onnx_path: '/etc/passwd' } })).body.error.code, 'compile.path_outside_root');
  });
});

test('the compile service unreachable: the job is FAILED with a clear reason, the token nowhere in it', async () => {
  await withBuilder(closedUrl, async (b) => {
    const r = await api(b.url, '/api/pipeline/compile', { json: { onnx_path: join(models, 'export-544.onnx') } });
    assert.equal(r.status, 202, r.text);
    const job = await settled(b, r.body.jobs[0].id);
    assert.equal(job.state, 'FAILED');
    assert.equal(job.reason, `the compile service at ${closedUrl} is not reachable from this builder (ECONNREFUSED)`);
    assert.equal(job.result.error.code, 'compile.service_unreachable');
    const logs = (await api(b.url, `/api/pipeline/jobs/${job.id}/logs`)).text;
    assert.match(logs, /context_enable_graphs=rf_detr_qcs8550/);
    for (const text of [r.text, JSON.stringify(job), logs]) assert.ok(!text.includes(TOKEN), 'the token is never answered');
  });
});

test('a compile reaches the service with qnn_dlc, rf_detr_qcs8550 and the token, and keeps the DLC; TrOCR is two jobs', async () => {
  await withBuilder(vendorUrl, async (b) => {
    const r = await api(b.url, '/api/pipeline/compile', { json: { onnx_path: join(models, 'export-544.onnx') } });
    const job = await settled(b, r.body.jobs[0].id);
    assert.equal(job.state, 'COMPILE_COMPLETE', job.reason);
    assert.equal(job.result.graph_name, 'rf_detr_qcs8550');
    assert.deepEqual(job.result.input_shape, [1, 3, 544, 544]);
    const sent = received.at(-1)!;
    assert.equal(sent.headers.authorization, `Token ${TOKEN}`);
    const options = JSON.parse(String(sent.headers['x-compile-options']));
    assert.equal(options.target_runtime, 'qnn_dlc');
    assert.equal(options.graph_name, 'rf_detr_qcs8550');
    assert.match(options.compile_options, /--qnn_options context_enable_graphs=rf_detr_qcs8550/);
    assert.deepEqual(options.input_specs, { input: [1, 3, 544, 544] });
    assert.ok(!JSON.stringify(job).includes(TOKEN));

    const trocr = await api(b.url, '/api/pipeline/compile', {
      json: { model: 'trocr', encoder_onnx: join(models, 'trocr-encoder.onnx'), decoder_onnx: join(models, 'trocr-decoder.onnx') },
    });
    assert.equal(trocr.body.jobs.length, 2);
    const parts = await Promise.all(trocr.body.jobs.map((j: any) => settled(b, j.id)));
    assert.deepEqual(
      parts.map((j: any) => [j.params.part, j.state, j.result.graph_name]),
      [
        ['encoder', 'COMPILE_COMPLETE', 'trocr_encoder_qcs8550'],
        ['decoder', 'COMPILE_COMPLETE', 'trocr_decoder_qcs8550'],
      ],
    );
  });
});

test('Track L: stages in order, path A behind a release audit, deploy as host env; its artifact refused by compile', async () => {
  await withBuilder(vendorUrl, async (b) => {
    const a = await api(b.url, '/api/track-l/artifacts', { json: { name: 'describer-a', base_model: 'qwen2.5-vl-7b', train_path: 'A' } });
    assert.equal(a.status, 201, a.text);
    const stage = (s: string, extra: object = {}) => api(b.url, `/api/track-l/artifacts/${a.body.id}/stages`, { json: { stage: s, ...extra } });
    assert.equal((await stage('train')).body.error.code, 'track-l.stage_out_of_order');
    assert.equal((await stage('curriculum')).status, 200);
    assert.equal((await stage('dataset_factory')).status, 200);
    assert.equal((await stage('train')).body.error.code, 'track-l.release_audit_missing');
    await api(b.url, `/api/track-l/artifacts/${a.body.id}/audit`, { json: { auditor: 'ops', summary: 'release audit passed' } });
    assert.equal((await stage('train')).status, 200);
    assert.equal((await stage('package')).status, 200);
    assert.equal((await stage('deploy')).body.error.code, 'track-l.host_env_missing');
    assert.equal((await stage('deploy', { host_env: { LOOKOUT_DESCRIBER_MODEL: 'describer-a' } })).status, 200);
    assert.equal((await stage('evaluate')).status, 200);
    assert.equal((await stage('promote')).status, 200);
    assert.equal((await api(b.url, '/api/track-l/promoted')).body.host_env.LOOKOUT_DESCRIBER_MODEL, 'describer-a');

    const refused = await api(b.url, '/api/pipeline/compile', { json: { artifact_id: a.body.id, onnx_path: join(models, 'export-544.onnx') } });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'compile.track_l_refused');
    assert.match(refused.body.error.message, /host only and never go through the vendor compile/);
  });
});
