import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeviceOwnership } from '../../../../hub/src/state/device-ownership.js';
import { StreamMembership, membershipChangeOf } from '../../../../hub/src/state/stream-membership.js';

const A = 'hub-a-ingest-0';
const B = 'hub-b-ingest-0';

describe('StreamMembership (who divides the apply, as the ingest stream says)', () => {
  it('changes the members where a change is read, a copy changing nothing; saved and restored with the stream point', () => {
    const m = new StreamMembership(new DeviceOwnership(A));
    assert.equal(m.apply(JSON.stringify({ join: A })), true);
    assert.equal(m.apply(JSON.stringify({ join: B })), true);
    assert.equal(m.apply(JSON.stringify({ join: B })), false, 'a copy');
    assert.deepEqual(m.members, [A, B]);
    const saved = m.toJSON();
    assert.equal(m.apply(JSON.stringify({ leave: A })), true);
    assert.deepEqual(m.members, [B]);
    m.restore(saved);
    assert.deepEqual(m.members, [A, B]);
    m.restore('not json');
    m.restore(JSON.stringify([A, 7, '', 'x'.repeat(300)]));
    assert.deepEqual(m.members, [A], 'what is not a member id is left out');
  });

  it('reads no change from what is not one', () => {
    for (const bad of ['', 'null', '[]', '{"join":7}', '{"join":"a","leave":"b"}', '{"leave":"a b"}', '{"join":""}'])
      assert.equal(membershipChangeOf(bad), undefined, bad);
    assert.deepEqual(membershipChangeOf('{"leave":"hub-a-ingest-0"}'), { leave: A });
  });

  it('asks for the changes that make the live replicas the members: a join at once, a leave after two rounds missing, none again while it is not read back', () => {
    const m = new StreamMembership(new DeviceOwnership(A));
    m.apply(JSON.stringify({ join: A }));
    assert.deepEqual(m.reconcile([A, B], 0), [{ join: B }]);
    assert.deepEqual(m.reconcile([A, B], 1_000), [], 'asked already');
    assert.deepEqual(m.reconcile([A, B], 3_500), [{ join: B }], 'not read back: asked again');
    m.apply(JSON.stringify({ join: B }));
    assert.deepEqual(m.reconcile([A], 4_000), [], 'one round missing: it may be starting, or its heartbeat late');
    assert.deepEqual(m.reconcile([A, B], 5_000), [], 'back: the count starts again');
    assert.deepEqual(m.reconcile([A], 6_000), []);
    assert.deepEqual(m.reconcile([A], 7_000), [{ leave: B }]);
    m.apply(JSON.stringify({ leave: A }));
    assert.deepEqual(m.reconcile([A], 8_000), [{ join: A }], 'a replica written as gone while alive joins again');
  });
});
