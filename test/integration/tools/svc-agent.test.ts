/**
 * The svc-agent routes on a hub with a real `lookout-edge` device (simulated camera, detector,
 * tracker, camera profile, conversational_safety_query): resolve of a structured request, a rules
 * request and a describer's plan; execute of read-only steps, a mutating step refused unless the
 * plan is approved and the caller sends the approval token, a dry run that changes nothing, each
 * step audited in the debug ring; agent memory round trip, its bounds and a hub restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDescriberDouble, type DescriberDouble } from '../../support/describer-double.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, testHub, TEST_FLEET_SECRET } from '../../support/hub-helpers.js';

const DEVICE = 'cam-agent';
const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'safety-camera.json');
const APPROVAL = 'approval-token-for-tests-0123456789';
const KEPT = ['hub-meta', 'debug-ring', 'bus-cache', 'registry', 'tools-proxy', 'svc-agent'];

async function startTestHub(dataDir: string, describerUrl?: string): Promise<RunningHub> {
  const set = await loadHubPluginSet();
  return testHub({
    dataDir,
    toolTimeoutMs: 10_000,
    plugins: set.plugins.filter((p) => KEPT.includes(p.name)),
    essential: set.essential,
    env: {
      LOOKOUT_SVC_AGENT_APPROVAL_TOKEN: APPROVAL,
      LOOKOUT_SVC_AGENT_MEMORY_NOTES: '3',
      LOOKOUT_SVC_AGENT_MEMORY_SCOPES: '4',
      ...(describerUrl ? { LOOKOUT_SVC_AGENT_DESCRIBER_URL: describerUrl } : {}),
    },
  });
}

describe('svc-agent routes against a real device', () => {
  let dir: string;
  let hub: RunningHub;
  let device: DeviceProcess;
  let describer: DescriberDouble;

  const profile = async () => (await api(hub.url, '/tools/call?target=' + DEVICE, { json: { tool: 'get_camera_profile', arguments: {} } })).body.result.profile;
  const setFps = (fps: number, approved: boolean) => ({
    plan: { steps: [{ device: DEVICE, tool: 'set_camera_profile', arguments: { fps } }], approved },
    agent: 'test-agent',
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-agent-'));
    describer = await startDescriberDouble({ kind: 'fixed', text: '' });
    hub = await startTestHub(join(dir, 'hub'), describer.url);
    device = await startDeviceProcess({
      deviceId: DEVICE,
      mqtt: hub.brokerUrl,
      image: IMAGE,
      layer: 'layer2',
      dataDir: join(dir, 'device'),
      env: { SIM_SCENARIO: 'people-crossing', LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET },
      readyTimeoutMs: 30_000,
    });
    const deadline = Date.now() + 20_000;
    while ((await api(hub.url, `/fleet/registry?device=${DEVICE}`)).body.shadows?.[0] === undefined) {
      assert.ok(Date.now() < deadline, 'the device did not register within 20 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    await device?.stop();
    await hub?.close();
    await describer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('resolves a structured request into a plan on the named device', async () => {
    const r = await api(hub.url, '/svc-agent/resolve', { json: { tool: 'get_device_health', devices: [DEVICE] } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, {
      plan: { steps: [{ device: DEVICE, tool: 'get_device_health', arguments: {} }], approved: false },
      resolved_by: 'structured',
      note: null,
    });
    const unknown = await api(hub.url, '/svc-agent/resolve', { json: { tool: 'get_device_health', devices: ['cam-nowhere'] } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'target_unknown');
  });

  it('resolves text by the rules when the describer answers no plan, saying so', async () => {
    describer.mode = { kind: 'fixed', text: 'I think you should look at the camera.' };
    const r = await api(hub.url, '/svc-agent/resolve', { json: { text: `How many people are at ${DEVICE}?` } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.resolved_by, 'rules');
    assert.match(r.body.note, /not a plan/);
    assert.deepEqual(r.body.plan.steps, [
      { device: DEVICE, tool: 'conversational_safety_query', arguments: { question: `How many people are at ${DEVICE}?` } },
    ]);
    const none = await api(hub.url, '/svc-agent/resolve', { json: { text: 'sing me a song' } });
    assert.equal(none.status, 422);
    assert.equal(none.body.error.code, 'svc-agent.request_unresolved');
  });

  it('takes the describer’s plan when it names registered devices', async () => {
    describer.mode = { kind: 'fixed', text: JSON.stringify({ steps: [{ device: DEVICE, tool: 'get_latest_dets', arguments: {} }] }) };
    const r = await api(hub.url, '/svc-agent/resolve', { json: { text: 'what does the camera see' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.resolved_by, 'describer');
    assert.deepEqual(r.body.plan.steps, [{ device: DEVICE, tool: 'get_latest_dets', arguments: {} }]);
  });

  it('runs read-only steps and audits each in the debug ring', async () => {
    const r = await api(hub.url, '/svc-agent/execute', {
      json: {
        plan: { steps: [{ device: DEVICE, tool: 'conversational_safety_query', arguments: { question: 'anyone there?', describe: false } }] },
        agent: 'test-agent',
      },
    });
    assert.equal(r.status, 200, r.text);
    const [step] = r.body.steps;
    assert.equal(step.decision, 'run');
    assert.equal(step.read_only, true);
    assert.equal(step.status, 'ok');
    assert.equal(typeof step.result.person_count, 'number');
    const events = await api(hub.url, `/debug/events?device=${DEVICE}&kind=svc_agent&limit=50`);
    assert.equal(events.status, 200, events.text);
    assert.ok(
      events.body.events.some((e: { kind: string; message: string }) => e.kind === 'svc_agent' && /conversational_safety_query: ok/.test(e.message)),
      JSON.stringify(events.body.events.slice(-5)),
    );
  });

  it('refuses an unapproved mutating step, and one approved without the approval token: nothing runs', async () => {
    const before = await profile();
    const unapproved = await api(hub.url, '/svc-agent/execute', { json: setFps(7, false), headers: { 'x-svc-agent-approval': APPROVAL } });
    assert.equal(unapproved.status, 403, unapproved.text);
    assert.equal(unapproved.body.error.code, 'svc-agent.plan_refused');
    assert.match(unapproved.body.error.details.steps[0].reason, /approved plan/);
    const noToken = await api(hub.url, '/svc-agent/execute', { json: setFps(7, true), headers: { 'x-svc-agent-approval': 'wrong-token-0123456789' } });
    assert.equal(noToken.status, 403);
    assert.match(noToken.body.error.details.steps[0].reason, /approval token/);
    assert.deepEqual(await profile(), before);
  });

  it('answers a dry run with what would happen and changes nothing', async () => {
    const before = await profile();
    const r = await api(hub.url, '/svc-agent/execute', { json: { ...setFps(7, false), dry_run: true } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.dry_run, true);
    assert.equal(r.body.steps[0].decision, 'refused');
    assert.equal(r.body.steps[0].read_only, false);
    const approved = await api(hub.url, '/svc-agent/execute', { json: { ...setFps(7, true), dry_run: true }, headers: { 'x-svc-agent-approval': APPROVAL } });
    assert.equal(approved.body.steps[0].decision, 'would_run');
    assert.equal(approved.body.steps[0].status, null);
    assert.deepEqual(await profile(), before);
  });

  it('runs an approved mutating step for a caller with the approval token', async () => {
    const fps = (await profile()).fps === 7 ? 8 : 7;
    const r = await api(hub.url, '/svc-agent/execute', { json: setFps(fps, true), headers: { 'x-svc-agent-approval': APPROVAL } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.steps[0].status, 'ok', JSON.stringify(r.body.steps[0]));
    assert.equal((await profile()).fps, fps);
    const events = await api(hub.url, `/debug/events?device=${DEVICE}&limit=50`);
    assert.ok(events.body.events.some((e: { kind: string; message: string }) => e.kind === 'svc_agent' && /set_camera_profile: ok/.test(e.message)));
  });

  it('keeps notes per device and fleet, bounded, across a hub restart', async () => {
    const put = (device: string | undefined, note: string) =>
      api(hub.url, '/svc-agent/memory', { method: 'PUT', json: { agent: 'a1', ...(device ? { device } : {}), note } });
    assert.equal((await put(DEVICE, 'door camera is noisy at night')).status, 200);
    const fleet = await put(undefined, 'fleet note');
    assert.equal(fleet.body.scope, 'fleet');
    const got = await api(hub.url, `/svc-agent/memory?agent=a1&device=${DEVICE}`);
    assert.deepEqual(
      got.body.notes.map((n: { text: string }) => n.text),
      ['door camera is noisy at night'],
    );
    // Three notes per scope: the fourth is refused, nothing dropped.
    await put(DEVICE, 'two');
    await put(DEVICE, 'three');
    const full = await put(DEVICE, 'four');
    assert.equal(full.status, 409);
    assert.equal(full.body.error.code, 'svc-agent.memory_full');
    assert.equal((await api(hub.url, `/svc-agent/memory?agent=a1&device=${DEVICE}`)).body.notes.length, 3);
    const tooLong = await put(DEVICE, 'x'.repeat(4001));
    assert.equal(tooLong.status, 400);
    const bad = await api(hub.url, '/svc-agent/memory?agent=bad%20agent');
    assert.equal(bad.status, 400);

    // Delete one note by id, then restart the hub on the same data folder: the rest is still there.
    const id = got.body.notes[0].id;
    const del = await api(hub.url, `/svc-agent/memory?agent=a1&device=${DEVICE}&id=${id}`, { method: 'DELETE' });
    assert.equal(del.body.removed, 1);
    await hub.close();
    hub = await startTestHub(join(dir, 'hub'));
    const afterRestart = await api(hub.url, `/svc-agent/memory?agent=a1&device=${DEVICE}`);
    assert.deepEqual(
      afterRestart.body.notes.map((n: { text: string }) => n.text),
      ['two', 'three'],
    );
    assert.equal((await api(hub.url, '/svc-agent/memory?agent=a1')).body.notes[0].text, 'fleet note');
  });
});
