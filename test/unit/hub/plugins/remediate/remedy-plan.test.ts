/**
 * The remediation planner on grades made by the real readiness graders from recorded check facts
 * (the readiness tests' fixtures, built through the wire contracts): each failing module gets its
 * known remedy, a healthy device none, and `modules` narrows the plan.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginReport } from '../../../../../core/src/index.js';
import { gradeDevice } from '../../../../../hub/plugins/readiness/src/grade-device.js';
import type { DeviceFacts } from '../../../../../hub/plugins/readiness/src/device-facts.js';
import { planDevice } from '../../../../../hub/plugins/remediate/src/remedy-plan.js';
import { CAMERA_PLUGINS, NOW, plugins, recordedFacts, recording, withHealth } from '../readiness/recorded-facts.js';

const DAY = 86_400_000;
const plan = (facts: DeviceFacts, modules?: Parameters<typeof planDevice>[1]) =>
  planDevice({ grade: gradeDevice(facts, 'hub-test'), plugins: facts.plugins?.list ?? [], layer: facts.layer }, modules);
const summary = (facts: DeviceFacts, modules?: Parameters<typeof planDevice>[1]) =>
  plan(facts, modules).map((a) => [a.remedy, a.module, a.how, a.tool, a.arguments] as const);

describe('remedy plan', () => {
  it('plans nothing for a ready device', () => {
    assert.equal(gradeDevice(recordedFacts(), 'hub-test').grade, 'ready');
    assert.deepEqual(plan(recordedFacts()), []);
  });

  it('restarts a failed plugin: on the module whose evidence names it, else on mcp_health', () => {
    const list: PluginReport[] = plugins([...CAMERA_PLUGINS, 'flaky'], {
      rtsp: { state: 'failed', code: 'port_in_use', message: 'port 8554 taken' },
      flaky: { state: 'failed', code: 'flaky.not_ready' },
    });
    const facts = withHealth({ status: 'degraded', plugins: list });
    assert.deepEqual(summary(facts), [
      ['restart_plugin', 'rtsp', 'cmd_tool', 'restart_plugin', { name: 'rtsp' }],
      ['restart_plugin', 'mcp_health', 'cmd_tool', 'restart_plugin', { name: 'flaky' }],
    ]);
  });

  it('does not restart a plugin skipped for its dependency (it comes back with it); one skipped for its config asks to re-apply the layer', () => {
    const list = plugins([...CAMERA_PLUGINS, 'flaky', 'needs-flaky', 'configured'], {
      flaky: { state: 'failed', code: 'flaky.not_ready' },
      'needs-flaky': { state: 'skipped', code: 'dependency_failed', message: 'dependency_failed: flaky' },
      configured: { state: 'skipped', code: 'config_invalid', message: 'ZONE is required' },
    });
    const actions = plan(withHealth({ status: 'degraded', plugins: list }));
    assert.deepEqual(
      actions.map((a) => [a.remedy, a.how, a.arguments]),
      [
        ['restart_plugin', 'cmd_tool', { name: 'flaky' }],
        ['reapply_layer', 'manual', {}],
      ],
    );
    assert.match(actions[1].manual!, /^lookout apply-layer layer3 cam-1 --restart/);
  });

  it('prunes a recorder whose storage is CRITICAL', () => {
    const facts = withHealth({ storage: 'CRITICAL' }, { recording: { ok: true, value: recording({ storage_health: 'CRITICAL', storage_used_pct: 97 }) } });
    assert.deepEqual(summary(facts), [['prune', 'recorder', 'cmd_tool', 'prune_recordings', {}]]);
  });

  it('an ended certificate: the manual renewal, then the announce that reads it', () => {
    const facts = recordedFacts();
    facts.registered!.certNotAfter = new Date(NOW - 2 * DAY).toISOString();
    const actions = plan(facts);
    assert.deepEqual(
      actions.map((a) => [a.remedy, a.module, a.how, a.tool]),
      [
        ['renew_certificate', 'device_identity_fp', 'manual', null],
        ['announce', 'device_identity_fp', 'cmd_tool', 'announce_identity'],
      ],
    );
    assert.match(actions[0].reason, /device certificate expired/);
    assert.match(actions[0].manual!, /lookout certs .*--device cam-1 .*--renew/);
  });

  it('renews the certificate and re-applies the layer over SSH when the hub can write the device files, else says why not', () => {
    const facts = withHealth({
      status: 'degraded',
      plugins: plugins([...CAMERA_PLUGINS, 'configured'], { configured: { state: 'skipped', code: 'config_invalid', message: 'ZONE is required' } }),
    });
    facts.registered!.certNotAfter = new Date(NOW - 2 * DAY).toISOString();
    const grade = gradeDevice(facts, 'hub-test');
    const input = { grade, plugins: facts.plugins?.list ?? [], layer: facts.layer };
    const via = 'root@10.0.0.7:22';
    const over = planDevice({ ...input, remote: { certificate: { ok: true, via }, layer: { ok: true, via } } });
    assert.deepEqual(
      over.map((a) => [a.remedy, a.how, a.tool, a.arguments, a.via, a.manual, a.manual_reason]),
      [
        ['reapply_layer', 'ssh', null, { layer: 'layer3' }, via, null, null],
        ['renew_certificate', 'ssh', null, {}, via, null, null],
        ['announce', 'cmd_tool', 'announce_identity', {}, null, null, null],
      ],
    );
    const reason = "no fleet CA to sign the device's certificate";
    const manual = planDevice({ ...input, remote: { certificate: { ok: false, reason }, layer: { ok: true, via } } });
    assert.deepEqual(
      manual.map((a) => [a.remedy, a.how, a.manual_reason]),
      [
        ['reapply_layer', 'ssh', null],
        ['renew_certificate', 'manual', reason],
        ['announce', 'cmd_tool', null],
      ],
    );
    // Nothing asked (no fleet-provision plugin): both manual, with that reason.
    assert.deepEqual(
      planDevice(input).map((a) => [a.how, a.manual_reason]),
      [
        ['manual', 'the hub has no fleet-provision plugin to write device files over SSH'],
        ['manual', 'the hub has no fleet-provision plugin to write device files over SSH'],
        ['cmd_tool', null],
      ],
    );
  });

  it('a certificate ending within 30 days is renewed too, though the device is ready', () => {
    const facts = recordedFacts();
    facts.registered!.certNotAfter = new Date(NOW + 10 * DAY).toISOString();
    assert.equal(gradeDevice(facts, 'hub-test').grade, 'ready');
    assert.deepEqual(
      plan(facts).map((a) => a.remedy),
      ['renew_certificate', 'announce'],
    );
  });

  it('re-announces a device whose hello names no sidecar port', () => {
    const facts = recordedFacts();
    facts.registered!.ports = { tools: 8765 };
    assert.deepEqual(summary(facts), [['announce', 'peer_sidecar', 'cmd_tool', 'announce_identity', {}]]);
  });

  it('narrows to the modules asked for, and plans the same from the same grade', () => {
    const list = plugins(CAMERA_PLUGINS, { rtsp: { state: 'failed', code: 'port_in_use' } });
    const facts = withHealth(
      { status: 'degraded', storage: 'CRITICAL', plugins: list },
      { recording: { ok: true, value: recording({ storage_health: 'CRITICAL' }) } },
    );
    assert.deepEqual(
      plan(facts, ['recorder']).map((a) => a.remedy),
      ['prune'],
    );
    assert.deepEqual(
      plan(facts, ['rtsp']).map((a) => a.remedy),
      ['restart_plugin'],
    );
    assert.deepEqual(plan(facts), plan(facts));
  });
});
