import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fleetGrade, viewOf } from '../../../../../hub/plugins/readiness/src/fleet-grade.js';
import { gradeDevice } from '../../../../../hub/plugins/readiness/src/grade-device.js';
import { FleetGradeSchema, type DeviceReadiness } from '../../../../../hub/plugins/readiness/src/readiness-schemas.js';
import { NOW, peerAck, recordedFacts } from './recorded-facts.js';

const STALE_AFTER = 620_000;

function graded(deviceId: string, broken = false, at = NOW): DeviceReadiness {
  const facts = recordedFacts({ deviceId, at, peerHello: broken ? { absent: 'no a2a plugin' } : { ok: true, value: peerAck({ device_id: deviceId }) } });
  return gradeDevice(facts, 'hub-a');
}

describe('the fleet grade', () => {
  it('is not_ready with no device, ready when every device is', () => {
    const empty = fleetGrade([], []);
    assert.equal(empty.grade, 'not_ready');
    assert.equal(empty.reason, 'no device is known to the hub');
    const all = fleetGrade([viewOf(graded('cam-1'), NOW, STALE_AFTER), viewOf(graded('cam-2'), NOW, STALE_AFTER)], []);
    assert.ok(FleetGradeSchema.safeParse(all).success);
    assert.equal(all.grade, 'ready');
    assert.deepEqual(all.by_grade, { ready: 2, degraded: 0, not_ready: 0 });
    assert.equal(all.modules.hermes_mesh.ready, 2);
  });

  it('is degraded while some device is ready, not_ready when none is; unchecked devices count as not_ready', () => {
    const mixed = fleetGrade([viewOf(graded('cam-1'), NOW, STALE_AFTER), viewOf(graded('cam-2', true), NOW, STALE_AFTER)], []);
    assert.equal(mixed.grade, 'degraded');
    assert.equal(mixed.reason, '1 of 2 devices not ready (not ready: cam-2)');
    assert.equal(mixed.modules.cross_a2a_federation.not_ready, 1);
    const none = fleetGrade([viewOf(graded('cam-2', true), NOW, STALE_AFTER)], ['cam-3']);
    assert.equal(none.grade, 'not_ready');
    assert.deepEqual(none.by_grade, { ready: 0, degraded: 0, not_ready: 2 });
    assert.match(none.reason!, /not checked yet: cam-3/);
    const waiting = fleetGrade([viewOf(graded('cam-1'), NOW, STALE_AFTER)], ['cam-3']);
    assert.equal(waiting.grade, 'degraded');
  });

  it('ages grades by the clock it is given, and calls them stale past two rounds', () => {
    const record = graded('cam-1', false, NOW - 700_000);
    const view = viewOf(record, NOW, STALE_AFTER);
    assert.equal(view.age_s, 700);
    assert.equal(view.stale, true);
    assert.equal(viewOf(record, NOW - 600_000, STALE_AFTER).stale, false);
    assert.deepEqual(fleetGrade([view], []).stale, ['cam-1']);
  });
});
