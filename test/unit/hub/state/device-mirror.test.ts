import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DeviceMirror } from '../../../../hub/src/state/device-mirror.js';
import { DeviceOwnership } from '../../../../hub/src/state/device-ownership.js';
import type { HeldMessage } from '../../../../hub/src/state/mirrored-messages.js';

const SELF = 'a-ingest-0';
const OTHER = 'b-ingest-0';
const members = new DeviceOwnership(SELF);
members.setMembers([SELF, OTHER]);
const ids = Array.from({ length: 50 }, (_, i) => `cam-${i}`);
const theirs = ids.find((id) => !members.owns(id))!;
const mine = ids.find((id) => members.owns(id))!;
const stamp = (n: number) => Buffer.from(JSON.stringify({ timestamp: new Date(Date.UTC(2026, 10, 27, 12, 0, n)).toISOString(), n }));

describe('DeviceMirror (what a replica dividing the apply holds back)', () => {
  const applied: HeldMessage[] = [];
  let applying = false;
  const mirror = new DeviceMirror({ self: SELF, intervalMs: 60_000, apply: (m) => applied.push(m), applying: () => applying });
  for (const join of [SELF, OTHER]) mirror.membership.apply(JSON.stringify({ join }));
  after(() => mirror.close());

  it("holds another replica's device's dets and telemetry, never its own's nor other topics", () => {
    assert.equal(mirror.hold(`devices/${theirs}/telemetry`, stamp(1), false, 1), 'held');
    assert.equal(mirror.hold(`devices/${theirs}/telemetry`, stamp(2), false, 2), 'held');
    assert.equal(mirror.hold(`devices/${mine}/telemetry`, stamp(3), false, 3), 'own', 'its own device: applied now');
    assert.equal(mirror.hold(`devices/${mine}/dets/x`, stamp(4), false, 4), 'own', 'not a mirrored topic: every replica applies it as its own');
    assert.equal(mirror.hold('fleet/announcements', stamp(5), false, 5), 'own', 'not a device topic');
    assert.deepEqual(mirror.status().held_devices, 1);
  });

  it('applies what it held of a device before another topic of it, and before a read', () => {
    applied.length = 0;
    assert.equal(mirror.hold(`devices/${theirs}/status`, stamp(6), true, 6), 'own');
    assert.deepEqual(
      applied.map((m) => [m.topic, m.collapsed]),
      [[`devices/${theirs}/telemetry`, 1]],
      'the newest telemetry, standing for the one it replaced, applied before the status the caller applies next',
    );
    mirror.hold(`devices/${theirs}/dets`, stamp(7), false, 7);
    applying = true;
    mirror.freshen(theirs);
    assert.equal(applied.length, 1, 'not while a message is being applied');
    applying = false;
    mirror.freshen(theirs);
    assert.equal(applied.length, 2);
    assert.equal(mirror.status().held_devices, 0);
  });

  it('applies every message of a followed device until its follower ends, then holds again', () => {
    const end = mirror.follow(theirs);
    assert.equal(mirror.hold(`devices/${theirs}/dets`, stamp(8), false, 8), 'foreign', 'applied now, derived by its owner');
    const all = mirror.follow();
    assert.equal(mirror.status().followers, 2);
    end();
    end();
    assert.equal(mirror.hold(`devices/${theirs}/dets`, stamp(9), false, 9), 'foreign', 'every device is still followed');
    all();
    assert.equal(mirror.status().followers, 0);
    assert.equal(mirror.hold(`devices/${theirs}/dets`, stamp(10), false, 10), 'held');
  });

  it('owns every device once the other replica is gone', () => {
    mirror.freshen();
    mirror.membership.apply(JSON.stringify({ leave: OTHER }));
    assert.equal(mirror.hold(`devices/${theirs}/dets`, stamp(11), false, 11), 'own');
    assert.equal(mirror.status().replicas, 1);
  });
});
