import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readinessOf } from '../../../../../hub/plugins/fleet-health/src/shared-readiness.js';
import { viewOf } from '../../../../../hub/plugins/readiness/src/fleet-grade.js';
import { gradeDevice } from '../../../../../hub/plugins/readiness/src/grade-device.js';
import { NOW, recordedFacts } from '../readiness/recorded-facts.js';

const local = { grade: 'ready' as const, checks: { online: true, storage_ok: true }, failing: [] };

describe('the readiness /fleet/health shows', () => {
  it('is the readiness plugin’s grade when it runs, with the bus cache checks beside it', () => {
    const stored = viewOf(gradeDevice(recordedFacts({ peerHello: { absent: 'the hub runs no a2a plugin' } }), 'hub-a'), NOW, 1_000_000);
    const r = readinessOf(local, { stored });
    assert.equal(r.grade, 'not_ready');
    assert.equal(r.source, 'readiness');
    assert.equal(r.checked_at, stored.checked_at);
    assert.equal(r.modules?.cross_a2a_federation, 'not_ready');
    assert.equal(r.modules?.hermes_mesh, 'ready');
    assert.match(r.reason!, /cross_a2a_federation \(the hub runs no a2a plugin\)/);
    assert.deepEqual(r.checks, local.checks);
  });

  it('is not_ready for a device the readiness checks have not graded yet, as the fleet grade counts it', () => {
    const r = readinessOf(local, { stored: undefined });
    assert.equal(r.grade, 'not_ready');
    assert.equal(r.source, 'readiness');
    assert.equal(r.checked_at, null);
  });

  it('comes from the bus cache checks alone without the readiness plugin', () => {
    const r = readinessOf({ grade: 'degraded', checks: { online: true, storage_ok: false }, failing: ['storage_ok'] }, undefined);
    assert.equal(r.grade, 'degraded');
    assert.equal(r.source, 'fleet-health');
    assert.equal(r.modules, null);
    assert.equal(r.reason, 'failing: storage_ok');
  });
});
