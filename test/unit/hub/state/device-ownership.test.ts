import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeviceOwnership } from '../../../../hub/src/state/device-ownership.js';

const ids = Array.from({ length: 3000 }, (_, i) => `cam-${String(i).padStart(4, '0')}`);
const members = ['hub-a-ingest-0', 'hub-b-ingest-0', 'hub-c-ingest-0'];

function ownershipOf(self: string, live: string[]): DeviceOwnership {
  const o = new DeviceOwnership(self);
  o.setMembers(live);
  return o;
}

describe('DeviceOwnership (rendezvous hashing over the live replicas)', () => {
  it('every replica names the same single owner for each device, whatever order it read the members in', () => {
    const views = members.map((m, i) => ownershipOf(m, i % 2 ? [...members].reverse() : members));
    for (const id of ids) {
      const owners = views.filter((v) => v.owns(id));
      assert.equal(owners.length, 1, `${id}: one owner`);
      for (const v of views) assert.equal(v.ownerOf(id), owners[0].self);
    }
  });

  it('shares the devices out about evenly, even with ids that differ in one character', () => {
    const o = ownershipOf(members[0], members);
    const counts = new Map<string, number>();
    for (const id of ids) counts.set(o.ownerOf(id)!, (counts.get(o.ownerOf(id)!) ?? 0) + 1);
    for (const m of members) {
      const share = (counts.get(m) ?? 0) / ids.length;
      assert.ok(share > 0.28 && share < 0.39, `${m} owns ${(share * 100).toFixed(1)} %`);
    }
  });

  it('when a replica leaves only its devices move, and a replica alone owns them all', () => {
    const before = ownershipOf(members[0], members);
    const after = ownershipOf(members[0], members.slice(0, 2));
    for (const id of ids) {
      if (before.ownerOf(id) !== members[2]) assert.equal(after.ownerOf(id), before.ownerOf(id), `${id} stays where it was`);
      else assert.notEqual(after.ownerOf(id), members[2]);
    }
    const alone = ownershipOf(members[1], [members[1]]);
    assert.ok(ids.every((id) => alone.owns(id)));
    const none = ownershipOf(members[1], []);
    assert.equal(none.ownerOf(ids[0]), undefined);
    assert.ok(
      ids.every((id) => none.owns(id)),
      'no member yet (no replica has joined): every replica applies every device as its own',
    );
    assert.ok(
      ids.every((id) => !ownershipOf(members[1], [members[0]]).owns(id)),
      'not a member: owns nothing',
    );
  });

  it('answers again after the members change (no owner kept from before)', () => {
    const o = ownershipOf(members[0], members);
    const mine = ids.filter((id) => o.owns(id));
    assert.ok(mine.length < ids.length);
    assert.equal(o.setMembers(members), false, 'the same members: no change');
    assert.equal(o.setMembers([members[0]]), true);
    assert.ok(ids.every((id) => o.owns(id)));
  });
});
