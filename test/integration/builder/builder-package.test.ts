/**
 * Stage 5a over real HTTP: rf_detr_edge4.tar built from a training job (ONNX) and from a compile of
 * it (DLC), its entries read back with tar-stream, its labels.json checked with the detector's own
 * schema and the package prepared by the detector's ONNX back-end checks; versions kept across a
 * restart; a Track L artifact refused.
 */
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract } from 'tar-stream';
import { testBuilder } from './builder-helpers.js';
import { api, waitFor } from '../../support/hub-helpers.js';
import { PackageLabelsSchema } from '../../../plugins/detector/src/service.js';
import { PackageConfigSchema } from '../../../plugins/detector/src/model/package-schema.js';
import { prepareModel } from '../../../plugins/detector/src/model/prepare-model.js';
import type { RunningBuilder } from '../../../builder/src/start-builder.js';

let dir: string;
let dataset: string;
const vendor = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from('a DLC from the compile service')));
});

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lookout-builder-package-'));
  dataset = join(dir, 'gate');
  await mkdir(dataset);
  await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
});
after(async () => {
  vendor.close();
  await rm(dir, { recursive: true, force: true });
});

const open = (data: string) =>
  testBuilder(data, {
    env: { COMPILE_SERVICE_TOKEN: 'token-package-test', LOOKOUT_BUILDER_COMPILE_URL: `http://127.0.0.1:${(vendor.address() as { port: number }).port}` },
  });

const settled = (b: RunningBuilder, id: string) =>
  waitFor(`job ${id}`, async () => {
    const j = (await api(b.url, `/api/pipeline/jobs/${id}`)).body;
    return ['TRAINING_COMPLETE', 'COMPILE_COMPLETE', 'FAILED'].includes(j.state) ? j : undefined;
  });

async function tarEntries(path: string): Promise<Map<string, Buffer>> {
  const entries = new Map<string, Buffer>();
  const ex = extract();
  ex.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c) => chunks.push(c as Buffer));
    stream.on('end', () => {
      entries.set(header.name, Buffer.concat(chunks));
      next();
    });
  });
  await new Promise<void>((resolve, reject) =>
    createReadStream(path)
      .pipe(ex)
      .on('finish', () => resolve())
      .on('error', reject),
  );
  return entries;
}

test('a package of a training job: rf_detr_edge4.tar with the ONNX, config.json and labels.json, tagged; the detector prepares it', async () => {
  const data = join(dir, 'a');
  let b = await open(data);
  try {
    await api(b.url, '/api/ontology', { json: { classes: ['person'] } });
    await api(b.url, '/api/ontology/compile', { json: {} });
    const train = await settled(
      b,
      (await api(b.url, '/api/pipeline/launch', { json: { epochs: 2, batch_size: 4, gcs_dataset: dataset, recipe: 'test-double' } })).body.id,
    );
    assert.equal(train.state, 'TRAINING_COMPLETE', train.reason);
    const made = await api(b.url, '/api/packages', { json: { train_job_id: train.id } });
    assert.equal(made.status, 201, made.text);
    const pkg = made.body;
    assert.equal(pkg.version, 'v1');
    assert.equal(pkg.train_job_id, train.id);
    assert.equal(pkg.ontology_hash, train.result.ontology_hash);
    assert.ok(pkg.path.endsWith('/rf_detr_edge4.tar'));

    const entries = await tarEntries(pkg.path);
    assert.deepEqual([...entries.keys()], ['config.json', 'labels.json', 'rf_detr_qcs8550.onnx']);
    assert.ok(entries.get('rf_detr_qcs8550.onnx')!.equals(await readFile(train.result.onnx_path)), 'the export, byte for byte');
    const config = JSON.parse(entries.get('config.json')!.toString());
    PackageConfigSchema.parse(config);
    assert.deepEqual(config, {
      model: 'rf_detr_qcs8550.onnx',
      backend: 'onnx',
      backend_properties: { runtime: 'cpu', performance_profile: 'high_performance' },
      version: 'v1',
      ontology_hash: pkg.ontology_hash,
      train_job_id: train.id,
    });
    const labels = PackageLabelsSchema.parse(JSON.parse(entries.get('labels.json')!.toString()));
    assert.deepEqual(labels.classes, ['handgun', 'rifle', 'knife', 'backpack', 'person']);
    assert.deepEqual(labels.input_shape, [1, 3, 544, 544]);
    assert.equal(labels.version, 'v1');
    assert.equal(labels.train_job_id, train.id);
    assert.equal(labels.remap?.['4'], 0, 'person maps to production 0');
    assert.equal(
      pkg.sha256,
      createHash('sha256')
        .update(await readFile(pkg.path))
        .digest('hex'),
    );
    const prepared = await prepareModel(pkg.path, 'onnx');
    assert.equal(prepared.pkg.modelName, 'rf_detr_qcs8550.onnx');

    // A compile of that training packages its DLC for the DSP, with the same train job id.
    const compile = await settled(b, (await api(b.url, '/api/pipeline/compile', { json: { train_job_id: train.id } })).body.jobs[0].id);
    assert.equal(compile.state, 'COMPILE_COMPLETE', compile.reason);
    assert.equal(compile.parent_id, train.id);
    const dlc = (await api(b.url, '/api/packages', { json: { compile_job_id: compile.id } })).body;
    assert.equal(dlc.version, 'v2');
    const dlcEntries = await tarEntries(dlc.path);
    assert.deepEqual([...dlcEntries.keys()], ['config.json', 'labels.json', 'rf_detr_qcs8550.dlc']);
    assert.deepEqual(JSON.parse(dlcEntries.get('config.json')!.toString()).backend_properties, { runtime: 'dsp', performance_profile: 'high_performance' });
    assert.equal(JSON.parse(dlcEntries.get('labels.json')!.toString()).train_job_id, train.id);

    assert.equal((await api(b.url, '/api/packages', { json: { train_job_id: train.id, version: 'v1' } })).body.error.code, 'package.version_exists');
    assert.equal((await api(b.url, '/api/packages', { json: { compile_job_id: train.id } })).body.error.code, 'package.source_invalid');

    await b.close();
    b = await open(data);
    assert.deepEqual(
      (await api(b.url, '/api/packages')).body.packages.map((p: any) => p.version),
      ['v2', 'v1'],
      'every package is kept across a restart',
    );
  } finally {
    await b.close();
  }
});

test('a Track L artifact is refused as a device package (so never deployed to a device)', async () => {
  const b = await open(join(dir, 'b'));
  try {
    const a = (await api(b.url, '/api/track-l/artifacts', { json: { name: 'describer', base_model: 'stock-vlm' } })).body;
    assert.equal(a.train_path, 'B', 'path B by default');
    const r = await api(b.url, '/api/packages', { json: { artifact_id: a.id } });
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, 'package.track_l_refused');
    assert.match(r.body.error.message, /never packaged for, nor deployed to, a device/);
  } finally {
    await b.close();
  }
});
