import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_UNDERSTANDING_BYTES, historyEventOfRing } from '../../../../../hub/plugins/fleet-history/src/ring-records.js';

describe('fleet history: debug ring records it keeps', () => {
  it('dates an understanding by its incident’s time, and bounds it keeping the counts', () => {
    const details = {
      status: 'ok',
      incident_at: '2026-11-27T10:00:00.500Z',
      chunk: 'c.h265',
      result: { person_max_count: 2, track_count: 3, track_ids: [1, 2, 3] },
    };
    const e = historyEventOfRing({ kind: 'video_understand', device_id: 'cam', message: 'incident at …', details }, 99);
    assert.deepEqual(e, { deviceId: 'cam', at: Date.parse(details.incident_at), kind: 'understanding', name: 'incident', trackId: null, body: details });

    const big = { ...details, result: { ...details.result, track_ids: Array.from({ length: 20_000 }, (_, i) => i) } };
    const bounded = historyEventOfRing({ kind: 'video_understand', device_id: 'cam', message: 'm', details: big }, 99)!;
    assert.ok(JSON.stringify(bounded.body).length <= MAX_UNDERSTANDING_BYTES);
    assert.deepEqual(bounded.body.result, { person_max_count: 2, track_count: 3, track_ids_dropped: true });
    assert.equal(historyEventOfRing({ kind: 'video_understand', device_id: 'cam', message: 'm', details: { status: 'ok' } }, 99), undefined);
  });

  it('makes who, what and outcome of svc-agent, remediation and provisioning records, and keeps no other kind', () => {
    const agent = historyEventOfRing(
      {
        kind: 'svc_agent',
        device_id: 'cam',
        message: 'svc-agent step 0 set_camera_profile: refused: needs an approved plan',
        details: { agent: 'a1', tool: 'set_camera_profile' },
      },
      7,
    )!;
    assert.deepEqual(
      [agent.kind, agent.name, agent.at, agent.body.who, agent.body.what, agent.body.outcome],
      ['audit', 'svc_agent', 7, 'a1', 'set_camera_profile', 'refused: needs an approved plan'],
    );
    const remedy = historyEventOfRing(
      { kind: 'remediation', device_id: 'cam', message: 'm', details: { remedy: 'prune', module: 'recorder', status: 'failed' } },
      7,
    )!;
    assert.deepEqual([remedy.body.who, remedy.body.what, remedy.body.outcome], ['remediate', 'prune (recorder)', 'failed']);
    const provision = historyEventOfRing({ kind: 'provision', device_id: 'cam', message: 'm', details: { step: 'ssh', status: 'ok' } }, 7)!;
    assert.deepEqual([provision.body.who, provision.body.what, provision.body.outcome], ['provision', 'ssh', 'ok']);
    assert.equal(historyEventOfRing({ kind: 'tool_error', device_id: 'cam', message: 'm' }, 7), undefined);
    assert.equal(historyEventOfRing({ kind: 'svc_agent', message: 'no device' }, 7), undefined);
  });
});
