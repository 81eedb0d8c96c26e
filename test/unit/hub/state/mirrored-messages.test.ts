import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MirroredMessages } from '../../../../hub/src/state/mirrored-messages.js';

const stampAt = (n: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, n)).toISOString();
const m = (topic: string, n: number, body: Record<string, unknown> = { timestamp: stampAt(n), n }) => ({
  topic,
  payload: Buffer.from(JSON.stringify(body)),
  retain: false,
  at: 1000 + n,
});
const bodies = (held: { payload: Buffer }[]) => held.map((x) => (JSON.parse(x.payload.toString()) as { n: number }).n);

describe('MirroredMessages', () => {
  it('holds the newest message per topic, how many it replaced, in the order of the newest', () => {
    const held = new MirroredMessages();
    assert.ok(held.hold('d1', m('devices/d1/telemetry', 1), 0));
    assert.ok(held.hold('d1', m('devices/d1/dets', 2), 0));
    assert.ok(held.hold('d1', m('devices/d1/telemetry', 3), 0));
    assert.ok(held.hold('d1', m('devices/d1/telemetry', 4), 0));
    assert.ok(held.hold('d2', m('devices/d2/dets', 5), 0));
    assert.equal(held.devices, 2);
    assert.equal(held.collapsed, 2);
    const d1 = held.take('d1')!;
    assert.deepEqual(
      d1.map((x) => [x.topic, x.collapsed, x.at]),
      [
        ['devices/d1/dets', 0, 1002],
        ['devices/d1/telemetry', 2, 1004],
      ],
    );
    assert.deepEqual(bodies(d1), [2, 4]);
    assert.equal(d1[0].first, undefined, 'none replaced, none first');
    assert.deepEqual(bodies([{ payload: d1[1].first! }]), [1], 'the first it replaced, which the cache may hold already (a copy)');
    assert.equal(held.take('d1'), undefined, 'taken once');
    assert.deepEqual(held.deviceIds(), ['d2']);
    assert.ok(held.hold('d1', m('devices/d1/telemetry', 6), 0));
    assert.equal(held.take('d1')![0].collapsed, 0, 'a count starts again after the device was applied');
  });

  it('does not hold a message older than the one held (late), nor a copy of it: the caller applies those at once', () => {
    const held = new MirroredMessages();
    assert.ok(held.hold('d1', m('devices/d1/dets', 5), 0));
    assert.equal(held.hold('d1', m('devices/d1/dets', 4), 0), false, 'stamped earlier: arrived late');
    assert.equal(held.hold('d1', m('devices/d1/dets', 5), 0), false, 'the same bytes: a copy the broker sent again');
    assert.ok(held.hold('d1', m('devices/d1/dets', 5, { timestamp: stampAt(5), n: 55 }), 0), 'the same stamp, another message: the later wins');
    // Stamps in other forms are parsed: 12:00:06+01:00 is 11:00:06Z, older than 12:00:05Z.
    assert.equal(held.hold('d1', m('devices/d1/dets', 6, { timestamp: '2026-11-27T12:00:06+01:00', n: 6 }), 0), false);
    assert.ok(held.hold('d1', m('devices/d1/dets', 7, { n: 7 }), 0), 'without a stamp the later in the stream wins');
    assert.deepEqual(bodies(held.take('d1')!), [7]);
    assert.equal(held.collapsed, 2);
  });

  it('finds the stamp with blanks around the colon, not a key that only ends in timestamp', () => {
    const held = new MirroredMessages();
    const spaced = (n: number) => ({
      topic: 'devices/d1/telemetry',
      payload: Buffer.from(`{"x_timestamp":"9999","timestamp" : "${stampAt(n)}"}`),
      retain: false,
      at: n,
    });
    assert.ok(held.hold('d1', spaced(8), 0));
    assert.equal(held.hold('d1', spaced(7), 0), false, 'the top-level stamp, found past the other key, is older');
  });

  it('gives the devices that have waited long enough, oldest first', () => {
    const held = new MirroredMessages();
    held.hold('a', m('devices/a/dets', 1), 100);
    held.hold('b', m('devices/b/dets', 1), 200);
    held.hold('a', m('devices/a/dets', 2), 300);
    held.hold('c', m('devices/c/dets', 1), 400);
    assert.deepEqual([...held.due(250)], ['a', 'b']);
    held.take('a');
    held.hold('a', m('devices/a/dets', 3), 500);
    assert.deepEqual([...held.due(450)], ['b', 'c'], 'a device held again waits from then');
  });
});
