/**
 * Stage 5b end to end: the builder deploys through the operator's own push-models and apply-layer
 * over a real OpenSSH sshd on loopback (test/support/sshd.ts) to real `lookout-edge` processes whose
 * filesystem roots are where those writes land (one root per device: LOOKOUT_BUILDER_DEPLOY_ROOT
 * with {device}). The devices run the detector on the onnx back-end with RF_DETR_EDGE4_MODEL at
 * /data/models/rf_detr_edge4.tar, so that what makes a running device load a pushed package is what
 * the product does: apply-layer --restart runs the service command over SSH (here it sends the
 * runtime SIGTERM and a supervisor starts it again, as systemd does on a device) and waits for the
 * new hello on the hub's broker. The deploy then reads get_rfdetr_status through a real hub. A DLC
 * package the onnx fleet cannot load is rolled back: to the pure-encode layer on a device that had
 * no package, to the previous package on one that had, and the device runs that one again.
 */
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testBuilder } from './builder-helpers.js';
import { superviseDevice, type SupervisedDevice } from './supervised-device.js';
import { api, callTool, testHub, waitFor } from '../../support/hub-helpers.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { startDescriberDouble, type DescriberDouble } from '../../support/describer-double.js';
import type { RunningBuilder } from '../../../builder/src/start-builder.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';

let dir: string;
let sshd: Sshd;
let hub: RunningHub;
let b: RunningBuilder;
let describer: DescriberDouble;
const devices = new Map<string, SupervisedDevice>();
const rootOf = (id: string) => join(dir, 'devices', id);

/** The compile vendor's place (unreachable from tests): it answers bytes no back-end here runs, so the DLC package is a broken one. */
const vendor = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end(Buffer.from('not a model the onnx back-end runs')));
});

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lookout-builder-deploy-'));
  await mkdir(join(dir, 'run'));
  sshd = await startSshd();
  hub = await testHub();
  describer = await startDescriberDouble({ kind: 'lying', people: 97 });
  const knownHosts = join(dir, 'known_hosts');
  await writeFile(knownHosts, `${sshd.knownHostsLine}\n`);
  const registry = join(dir, 'registry.json');
  const ids = ['cam-1', 'cam-2'];
  await writeFile(registry, JSON.stringify({ devices: ids.map((id) => ({ device_id: id, ips: ['127.0.0.1'], ssh_port: sshd.port, ssh_user: 'root' })) }));
  // The camera image's frame source and detector stages without its media surfaces (encoder, recorder, RTSP…): nothing here watches video.
  const image = join(dir, 'detector-camera.json');
  await writeFile(
    image,
    JSON.stringify({
      name: 'detector-camera',
      description: 'camera image without its media surfaces',
      role: 'camera',
      plugins: ['die-temp', 'identity', 'system-health', 'thermal', 'status', 'firmware', 'camera-profile', 'camera', 'detector', 'tracker', 'safety-query'],
      essential: ['identity'],
    }),
  );
  for (const id of ids) {
    await mkdir(rootOf(id), { recursive: true });
    // No layer flag: the runtime reads the durable layer file apply-layer writes (layer2 until there is one).
    const device = await superviseDevice({
      deviceId: id,
      image,
      mqtt: hub.brokerUrl,
      dataDir: rootOf(id),
      pidFile: join(dir, 'run', `${id}.pid`),
      readyTimeoutMs: 60_000,
      env: { RF_DETR_BACKEND: 'onnx', RF_DETR_EDGE4_MODEL: '/data/models/rf_detr_edge4.tar', RF_DETR_STRIDE_FPS: '1' },
    });
    devices.set(id, device);
  }
  await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
  b = await testBuilder(join(dir, 'data'), {
    env: {
      LOOKOUT_BUILDER_HUB_URL: hub.url,
      LOOKOUT_BUILDER_DEPLOY_ROOT: join(dir, 'devices', '{device}'),
      LOOKOUT_BUILDER_SERVICE_COMMAND: `kill -TERM "$(cat '${join(dir, 'run')}/{device}.pid')"`,
      LOOKOUT_MQTT_URL: hub.brokerUrl,
      LOOKOUT_BUILDER_DEPLOY_VERIFY_MS: '30000',
      LOOKOUT_BUILDER_DEPLOY_POLL_MS: '200',
      LOOKOUT_REGISTRY_FILE: registry,
      LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath,
      LOOKOUT_SSH_KNOWN_HOSTS: knownHosts,
      COMPILE_SERVICE_TOKEN: 'token-deploy-test',
      LOOKOUT_BUILDER_COMPILE_URL: `http://127.0.0.1:${(vendor.address() as { port: number }).port}`,
    },
  });
});
after(async () => {
  await b?.close();
  for (const d of devices.values()) await d.stop();
  await hub?.close();
  vendor.close();
  await sshd?.stop();
  await describer?.close();
  await rm(dir, { recursive: true, force: true });
});

const settled = (id: string) =>
  waitFor(
    `job ${id}`,
    async () => {
      const j = (await api(b.url, `/api/pipeline/jobs/${id}`)).body;
      return ['TRAINING_COMPLETE', 'COMPILE_COMPLETE', 'DEPLOYED', 'FAILED'].includes(j.state) ? j : undefined;
    },
    180_000,
    100,
  );
const layerOf = async (id: string) => (await readFile(join(rootOf(id), 'data/config/edge_v3_layer.env'), 'utf8')).match(/^EDGE_V3_LAYER=(.*)$/m)?.[1];
/** get_rfdetr_status of the running device, through the hub. */
const status = async (id: string) => {
  const r = await callTool(hub.url, id, 'get_rfdetr_status');
  assert.equal(r.status, 200, r.text);
  return r.body.result as { backend: string; package_version: string | null; ontology_hash: string | null; train_job_id: string | null; model_error: unknown };
};

test('deploy to real devices over real sshd: a broken package on a fresh canary goes back to layer0; v1 to canary then fleet, loaded by the running detectors; a package they cannot load rolled back to v1, which runs again', async () => {
  await api(b.url, '/api/ontology', { json: { classes: ['person'] } });
  await api(b.url, '/api/ontology/compile', { json: {} });
  await mkdir(join(dir, 'gate'));
  const train = await settled(
    (await api(b.url, '/api/pipeline/launch', { json: { epochs: 1, batch_size: 2, gcs_dataset: join(dir, 'gate'), recipe: 'test-double' } })).body.id,
  );
  const good = (await api(b.url, '/api/packages', { json: { train_job_id: train.id, version: 'v1' } })).body;
  const compile = await settled((await api(b.url, '/api/pipeline/compile', { json: { train_job_id: train.id } })).body.jobs[0].id);
  // A DLC package: the fleet runs the onnx back-end, which refuses it.
  const broken = (await api(b.url, '/api/packages', { json: { compile_job_id: compile.id, version: 'v2-dlc' } })).body;
  const [cam1, cam2] = [devices.get('cam-1')!, devices.get('cam-2')!];
  assert.equal((await status('cam-1')).package_version, null, 'no package on the devices yet');

  // cam-2 had no package: the broken one is refused by its restarted detector, and it goes back to pure encode.
  const first = await api(b.url, '/api/pipeline/deploy', { json: { package_id: broken.version, devices: ['cam-2'], soak_s: 0 } });
  assert.equal(first.status, 202, first.text);
  const fresh = await settled(first.body.id);
  assert.equal(fresh.state, 'FAILED');
  assert.match(fresh.reason, /^canary cam-2: the detector refused package v2-dlc: .+; rolled back cam-2 to layer0 \(pure encode\)$/);
  assert.equal(await layerOf('cam-2'), 'layer0_baseline');
  assert.equal(cam2.starts(), 3, 'restarted with the package, then with layer0');
  await waitFor('cam-2 back at layer0 in the hub', async () => (await callTool(hub.url, 'cam-2', 'get_rfdetr_status')).body.error?.code, 30_000, 100);

  // The promoted Track L model (its deploy: host env naming its OpenAI-compatible endpoint) goes to the devices with the layer.
  const l = (await api(b.url, '/api/track-l/artifacts', { json: { name: 'describer-l1', base_model: 'stock-llm' } })).body;
  for (const stage of ['curriculum', 'dataset_factory', 'train', 'package', 'deploy', 'evaluate', 'promote']) {
    const host_env = stage === 'deploy' ? { OPENAI_BASE_URL: describer.url, OPENAI_MODEL: 'lookout-describer-l1' } : undefined;
    const r = await api(b.url, `/api/track-l/artifacts/${l.id}/stages`, { json: { stage, ...(host_env ? { host_env } : {}) } });
    assert.equal(r.status, 200, r.text);
  }
  assert.deepEqual((await api(b.url, '/api/track-l/promoted')).body.describer, { url: describer.url, model: 'lookout-describer-l1', artifact: 'describer-l1' });

  const ok = await settled((await api(b.url, '/api/pipeline/deploy', { json: { package_id: 'v1', devices: ['cam-1', 'cam-2'], soak_s: 1 } })).body.id);
  assert.equal(ok.state, 'DEPLOYED', ok.reason);
  assert.deepEqual([ok.progress, ok.progress_note], [1, 'v1 deployed: cam-1, cam-2'], 'the last note says it is done, not what it waited for');
  assert.deepEqual(ok.result.devices, [
    { device: 'cam-1', role: 'canary' },
    { device: 'cam-2', role: 'fleet' },
  ]);
  for (const id of ['cam-1', 'cam-2']) {
    assert.equal(await layerOf(id), 'layer2_tracker');
    assert.ok((await readFile(join(rootOf(id), 'data/models/rf_detr_edge4.tar'))).equals(await readFile(good.path)), `the package on ${id}, byte for byte`);
    const s = await status(id);
    assert.deepEqual(
      [s.backend, s.package_version, s.ontology_hash, s.train_job_id, s.model_error],
      ['onnx', 'v1', good.ontology_hash, train.id, null],
      `${id}'s running detector loaded v1`,
    );
  }
  // conversational_safety_query on the device, through the hub: phrased by the promoted model, which is overruled when it lies.
  const ask = async (id: string) => {
    const r = await callTool(hub.url, id, 'conversational_safety_query', { question: 'how many people are at the door?' });
    assert.equal(r.status, 200, r.text);
    return r.body.result as { answer: string; answer_source: string; describer_refused: boolean; describer_model: string | null; person_count: number };
  };
  const lied = await ask('cam-1');
  assert.deepEqual([lied.answer_source, lied.describer_refused, lied.describer_model], ['device', true, 'lookout-describer-l1'], lied.answer);
  assert.ok(describer.prompts.length >= 1, 'the promoted endpoint was asked');
  describer.mode = { kind: 'truthful' };
  const told = await ask('cam-2');
  assert.deepEqual([told.answer_source, told.describer_model], ['describer', 'lookout-describer-l1'], told.answer);
  assert.ok(told.answer.includes(`${told.person_count} people`), told.answer);

  const logs = (await api(b.url, `/api/pipeline/jobs/${ok.id}/logs`)).body.lines.map((l: any) => l.line);
  const order = logs.filter((l: string) => /^lookout (push-models|apply-layer)/.test(l)).map((l: string) => l.split(' ').slice(1, 4).join(' '));
  assert.deepEqual(order.slice(0, 4), [
    'push-models cam-1 ' + good.path,
    'apply-layer layer2 cam-1',
    'push-models cam-2 ' + good.path,
    'apply-layer layer2 cam-2',
  ]);
  assert.ok(logs.indexOf('canary cam-1: soak 1 s') < logs.findIndex((l: string) => l.startsWith('lookout push-models cam-2')), 'the soak before the rest');
  const cam2Starts = cam2.starts();

  const bad = await settled((await api(b.url, '/api/pipeline/deploy', { json: { package_id: broken.id, devices: ['cam-1', 'cam-2'], soak_s: 0 } })).body.id);
  assert.equal(bad.state, 'FAILED');
  assert.match(bad.reason, /^canary cam-1: the detector refused package v2-dlc: .+; rolled back cam-1 to package v1$/);
  assert.ok((await readFile(join(rootOf('cam-1'), 'data/models/rf_detr_edge4.tar'))).equals(await readFile(good.path)), 'v1 is back on the device');
  const again = await status('cam-1');
  assert.deepEqual([again.package_version, again.ontology_hash, again.model_error], ['v1', good.ontology_hash, null], 'cam-1 runs v1 again');
  assert.equal(cam1.starts(), 4, 'cam-1 restarted for v1, v2-dlc, then v1 again');
  const badLogs = (await api(b.url, `/api/pipeline/jobs/${bad.id}/logs`)).text;
  assert.ok(!badLogs.includes('lookout push-models cam-2'), 'the rest of the fleet untouched after the canary failed');
  assert.equal(cam2.starts(), cam2Starts, 'cam-2 not restarted');
  assert.equal((await status('cam-2')).package_version, 'v1');

  const where = (await api(b.url, '/api/deployments')).body.deployments.map((d: any) => [d.device, d.package_version, d.state]);
  assert.deepEqual(where, [
    ['cam-2', 'v1', 'active'],
    ['cam-1', 'v1', 'active'],
  ]);
});

test('a device name the per-device settings cannot take is refused before anything runs', async () => {
  const r = await api(b.url, '/api/pipeline/deploy', { json: { package_id: 'v1', devices: ['root@127.0.0.1:22'] } });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error.code, 'config_invalid');
  assert.match(r.body.error.message, /plain device name/);
});

test('a Track L artifact is refused by the device deploy', async () => {
  const a = (await api(b.url, '/api/track-l/artifacts', { json: { name: 'describer-deploy', base_model: 'stock-vlm' } })).body;
  const r = await api(b.url, '/api/pipeline/deploy', { json: { package_id: a.id, devices: ['cam-1'] } });
  assert.equal(r.status, 409);
  assert.equal(r.body.error.code, 'deploy.track_l_refused');
});
