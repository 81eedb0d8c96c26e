/**
 * The agent routes' describer is the builder's promoted Track L model when the hub has none set for
 * them (spec 02: a promoted Track L model is what the hub's describers use, through its
 * OpenAI-compatible endpoint). A real builder and a real hub (svc-agent reads LOOKOUT_BUILDER_URL,
 * as the /api/* pass-through does); the describer double of test/support plays the promoted model's
 * endpoint. Before a promotion the rules resolve; after it the promoted model is asked, by its name,
 * and a plan of its that names a device the fleet does not have is still dropped for the rules; a
 * describer set for the agent routes wins over the promoted one.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import type { RunningBuilder } from '../../../builder/src/start-builder.js';
import { testBuilder } from '../builder/builder-helpers.js';
import { startDescriberDouble, type DescriberDouble } from '../../support/describer-double.js';
import { api, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'cam-promoted';
const KEPT = ['hub-meta', 'debug-ring', 'bus-cache', 'registry', 'tools-proxy', 'svc-agent'];
const PLAN = JSON.stringify({ steps: [{ device: DEVICE, tool: 'get_latest_dets', arguments: {} }] });
const TEXT = `How many people are at ${DEVICE}?`;

let dir: string;
let builder: RunningBuilder;
let promotedModel: DescriberDouble;
let ownDescriber: DescriberDouble;
const hubs: RunningHub[] = [];

async function hubWith(env: Record<string, string>): Promise<RunningHub> {
  const set = await loadHubPluginSet();
  const hub = await testHub({ plugins: set.plugins.filter((p) => KEPT.includes(p.name)), essential: set.essential, env });
  hubs.push(hub);
  // The device is known to the fleet by its hello on the hub's broker.
  const client = await mqttClient(hub.brokerUrl);
  await publish(client, `devices/${DEVICE}/hello`, msg.hello(DEVICE, ['127.0.0.1'], 9));
  await endClient(client);
  await waitFor('the device registered', async () => (await api(hub.url, `/fleet/registry?device=${DEVICE}`)).body.shadows?.[0]);
  return hub;
}

const resolve = async (hub: RunningHub) => {
  const r = await api(hub.url, '/svc-agent/resolve', { json: { text: TEXT } });
  assert.equal(r.status, 200, r.text);
  return r.body as {
    resolved_by: string;
    note: string | null;
    describer?: { model: string; source: string; artifact: string | null };
    plan: { steps: unknown[] };
  };
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-agent-promoted-'));
  builder = await testBuilder(join(dir, 'builder'));
  promotedModel = await startDescriberDouble({ kind: 'fixed', text: PLAN });
  ownDescriber = await startDescriberDouble({ kind: 'fixed', text: PLAN });
});
after(async () => {
  for (const h of hubs) await h.close();
  await builder?.close();
  await promotedModel?.close();
  await ownDescriber?.close();
  await rm(dir, { recursive: true, force: true });
});

it('resolves text with the promoted Track L model once the builder has one, and still drops a plan that names no fleet device', async () => {
  const hub = await hubWith({ LOOKOUT_BUILDER_URL: builder.url, LOOKOUT_SVC_AGENT_PROMOTED_TTL_MS: '0' });
  const before = await resolve(hub);
  assert.deepEqual([before.resolved_by, before.note, before.describer], ['rules', null, undefined], 'nothing promoted: the rules');
  assert.equal(promotedModel.prompts.length, 0);

  const a = (await api(builder.url, '/api/track-l/artifacts', { json: { name: 'agent-l1', base_model: 'stock-llm' } })).body;
  for (const stage of ['curriculum', 'dataset_factory', 'train', 'package', 'deploy', 'evaluate', 'promote']) {
    const hostEnv = stage === 'deploy' ? { host_env: { OPENAI_BASE_URL: promotedModel.url, OPENAI_MODEL: 'agent-l1-served' } } : {};
    assert.equal((await api(builder.url, `/api/track-l/artifacts/${a.id}/stages`, { json: { stage, ...hostEnv } })).status, 200);
  }
  const after = await resolve(hub);
  assert.equal(after.resolved_by, 'describer', after.note ?? '');
  assert.deepEqual(after.describer, { model: 'agent-l1-served', source: 'track-l', artifact: 'agent-l1' });
  assert.deepEqual(after.plan.steps, [{ device: DEVICE, tool: 'get_latest_dets', arguments: {} }]);
  assert.deepEqual(promotedModel.models, ['agent-l1-served'], 'the promoted endpoint was asked for its model');

  promotedModel.mode = { kind: 'fixed', text: JSON.stringify({ steps: [{ device: 'cam-nowhere', tool: 'set_camera_profile', arguments: { fps: 1 } }] }) };
  const lied = await resolve(hub);
  assert.equal(lied.resolved_by, 'rules');
  assert.match(lied.note!, /the describer gave no plan/);
  assert.equal(lied.describer?.source, 'track-l');
  assert.deepEqual(lied.plan.steps, [{ device: DEVICE, tool: 'conversational_safety_query', arguments: { question: TEXT } }]);
  promotedModel.mode = { kind: 'fixed', text: PLAN };
});

it('a describer set for the agent routes wins over the promoted one; an unreachable builder leaves the rules, saying why', async () => {
  const own = await hubWith({
    LOOKOUT_BUILDER_URL: builder.url,
    LOOKOUT_SVC_AGENT_DESCRIBER_URL: ownDescriber.url,
    LOOKOUT_SVC_AGENT_DESCRIBER_MODEL: 'own-model',
  });
  const asked = promotedModel.prompts.length;
  const r = await resolve(own);
  assert.deepEqual([r.resolved_by, r.describer], ['describer', { model: 'own-model', source: 'env', artifact: null }]);
  assert.equal(promotedModel.prompts.length, asked, 'the promoted model was not asked');

  const gone = await hubWith({ LOOKOUT_BUILDER_URL: 'http://127.0.0.1:9', LOOKOUT_SVC_AGENT_DESCRIBER_TIMEOUT_MS: '2000' });
  const ruled = await resolve(gone);
  assert.equal(ruled.resolved_by, 'rules');
  assert.match(ruled.note!, /^the builder at http:\/\/127\.0\.0\.1:9 did not answer .*; resolved by the rules$/);
});
