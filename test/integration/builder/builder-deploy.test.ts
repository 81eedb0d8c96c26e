/**
 * Stage 5b against a real OpenSSH sshd on loopback (test/support/sshd.ts; the device filesystem rooted
 * in a folder, as the operator's SSH tests do): the builder deploys through the operator's own
 * push-models and apply-layer. get_rfdetr_status is asked through a 127.0.0.1 server in the hub's
 * place whose answer is the detector's own package loading (readModelPackage + prepareModel for the
 * onnx back-end) of the tar on the device at that moment: a TEST DOUBLE of the hub-to-device path
 * (the runtime is not restarted here). Canary then fleet to DEPLOYED; a package the fleet's back-end
 * cannot load rolled back to the previous tar, and on a fresh device to the pure-encode layer.
 */
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testBuilder } from './builder-helpers.js';
import { api, waitFor } from '../../support/hub-helpers.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { prepareModel } from '../../../plugins/detector/src/model/prepare-model.js';
import type { RunningBuilder } from '../../../builder/src/start-builder.js';

let dir: string;
let sshd: Sshd;
let root: string;
let b: RunningBuilder;
const asked: string[] = [];

/** In the hub's place: get_rfdetr_status as the onnx back-end would load the device's tar now. */
const hub = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const target = new URL(req.url!, 'http://x').searchParams.get('target')!;
    asked.push(target);
    prepareModel(join(root, 'data/models/rf_detr_edge4.tar'), 'onnx').then(
      (m) => {
        const labels = m.pkg.labels as { version: string; ontology_hash: string; train_job_id: string };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            result: { package_version: labels.version, ontology_hash: labels.ontology_hash, train_job_id: labels.train_job_id, model_path: m.pkg.path },
          }),
        );
      },
      () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result: { package_version: null, ontology_hash: null } })),
    );
  });
});
const vendor = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end(Buffer.from('not a model the onnx back-end runs')));
});

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lookout-builder-deploy-'));
  sshd = await startSshd();
  root = join(dir, 'device');
  await mkdir(root);
  const knownHosts = join(dir, 'known_hosts');
  await writeFile(knownHosts, `${sshd.knownHostsLine}\n`);
  const registry = join(dir, 'registry.json');
  const device = (id: string) => ({ device_id: id, ips: ['127.0.0.1'], ssh_port: sshd.port, ssh_user: 'root' });
  await writeFile(registry, JSON.stringify({ devices: [device('cam-1'), device('cam-2'), device('cam-3')] }));
  await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
  const port = (s: typeof hub) => (s.address() as { port: number }).port;
  b = await testBuilder(join(dir, 'data'), {
    env: {
      LOOKOUT_BUILDER_HUB_URL: `http://127.0.0.1:${port(hub)}`,
      LOOKOUT_BUILDER_DEPLOY_ROOT: root,
      LOOKOUT_BUILDER_DEPLOY_VERIFY_MS: '3000',
      LOOKOUT_BUILDER_DEPLOY_POLL_MS: '100',
      LOOKOUT_REGISTRY_FILE: registry,
      LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath,
      LOOKOUT_SSH_KNOWN_HOSTS: knownHosts,
      COMPILE_SERVICE_TOKEN: 'token-deploy-test',
      LOOKOUT_BUILDER_COMPILE_URL: `http://127.0.0.1:${port(vendor)}`,
    },
  });
});
after(async () => {
  await b?.close();
  hub.close();
  vendor.close();
  await sshd?.stop();
  await rm(dir, { recursive: true, force: true });
});

const settled = (id: string) =>
  waitFor(
    `job ${id}`,
    async () => {
      const j = (await api(b.url, `/api/pipeline/jobs/${id}`)).body;
      return ['TRAINING_COMPLETE', 'COMPILE_COMPLETE', 'DEPLOYED', 'FAILED'].includes(j.state) ? j : undefined;
    },
    60_000,
  );
const layerOf = async () => (await readFile(join(root, 'data/config/edge_v3_layer.env'), 'utf8')).match(/^EDGE_V3_LAYER=(.*)$/m)?.[1];

test('deploy over real sshd: a broken package on a fresh canary goes back to layer0; v1 to canary then fleet; a package the fleet cannot load rolled back to v1', async () => {
  await api(b.url, '/api/ontology', { json: { classes: ['person'] } });
  await api(b.url, '/api/ontology/compile', { json: {} });
  await mkdir(join(dir, 'gate'));
  const train = await settled(
    (await api(b.url, '/api/pipeline/launch', { json: { epochs: 1, batch_size: 2, gcs_dataset: join(dir, 'gate'), recipe: 'test-double' } })).body.id,
  );
  const good = (await api(b.url, '/api/packages', { json: { train_job_id: train.id, version: 'v1' } })).body;
  const compile = await settled((await api(b.url, '/api/pipeline/compile', { json: { train_job_id: train.id } })).body.jobs[0].id);
  // A DLC package: the simulated fleet runs the onnx back-end, which refuses it.
  const broken = (await api(b.url, '/api/packages', { json: { compile_job_id: compile.id, version: 'v2-dlc' } })).body;

  const first = await api(b.url, '/api/pipeline/deploy', { json: { package_id: broken.version, devices: ['cam-3'], restart: false, soak_s: 0 } });
  assert.equal(first.status, 202, first.text);
  const fresh = await settled(first.body.id);
  assert.equal(fresh.state, 'FAILED');
  assert.match(
    fresh.reason,
    /^canary cam-3: the detector did not report package v2-dlc within 3 s: it reports no package .*; rolled back cam-3 to layer0 \(pure encode\)$/,
  );
  assert.equal(await layerOf(), 'layer0_baseline');

  const ok = await settled(
    (await api(b.url, '/api/pipeline/deploy', { json: { package_id: 'v1', devices: ['cam-1', 'cam-2'], soak_s: 1, restart: false } })).body.id,
  );
  assert.equal(ok.state, 'DEPLOYED', ok.reason);
  assert.deepEqual(ok.result.devices, [
    { device: 'cam-1', role: 'canary' },
    { device: 'cam-2', role: 'fleet' },
  ]);
  assert.equal(await layerOf(), 'layer2_tracker');
  assert.ok((await readFile(join(root, 'data/models/rf_detr_edge4.tar'))).equals(await readFile(good.path)), 'the package on the device, byte for byte');
  const logs = (await api(b.url, `/api/pipeline/jobs/${ok.id}/logs`)).body.lines.map((l: any) => l.line);
  const order = logs.filter((l: string) => /^lookout (push-models|apply-layer)/.test(l)).map((l: string) => l.split(' ').slice(1, 4).join(' '));
  assert.deepEqual(order.slice(0, 4), [
    'push-models cam-1 ' + good.path,
    'apply-layer layer2 cam-1',
    'push-models cam-2 ' + good.path,
    'apply-layer layer2 cam-2',
  ]);
  assert.ok(logs.indexOf('canary cam-1: soak 1 s') < logs.findIndex((l: string) => l.startsWith('lookout push-models cam-2')), 'the soak before the rest');

  const bad = await settled(
    (await api(b.url, '/api/pipeline/deploy', { json: { package_id: broken.id, devices: ['cam-1', 'cam-2'], restart: false, soak_s: 0 } })).body.id,
  );
  assert.equal(bad.state, 'FAILED');
  assert.match(bad.reason, /^canary cam-1: the detector did not report package v2-dlc .*; rolled back cam-1 to package v1$/);
  assert.ok((await readFile(join(root, 'data/models/rf_detr_edge4.tar'))).equals(await readFile(good.path)), 'v1 is back on the device');
  const badLogs = (await api(b.url, `/api/pipeline/jobs/${bad.id}/logs`)).text;
  assert.ok(!badLogs.includes('lookout push-models cam-2'), 'the rest of the fleet untouched after the canary failed');
  assert.ok(asked.includes('cam-1'), 'the canary was asked through the hub');

  const where = (await api(b.url, '/api/deployments')).body.deployments.map((d: any) => [d.device, d.package_version, d.state]);
  assert.deepEqual(where, [
    ['cam-2', 'v1', 'active'],
    ['cam-1', 'v1', 'active'],
  ]);
});

test('a Track L artifact is refused by the device deploy', async () => {
  const a = (await api(b.url, '/api/track-l/artifacts', { json: { name: 'describer-deploy', base_model: 'stock-vlm' } })).body;
  const r = await api(b.url, '/api/pipeline/deploy', { json: { package_id: a.id, devices: ['cam-1'] } });
  assert.equal(r.status, 409);
  assert.equal(r.body.error.code, 'deploy.track_l_refused');
});
