/**
 * Which devices keep an in-memory history when more talk than are held: the held ones that talk
 * are kept, the first silent for forgetAfterMs makes room, and while none is, newcomers get none
 * (and are not looked at again before one could be).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HistoryRings } from '../../../../../hub/plugins/fleet-history/src/history-rings.js';

const FORGET_MS = 1000;
const reading = (t: number) => ({ t, die_temp_c: 40, camera_fps: null, detection_fps: null, person_count: null });
const hear = (rings: HistoryRings, id: string, t: number) => rings.ringOf(id, t)?.add(reading(t));

describe('fleet history: the rings held', () => {
  it('keeps devices that talk over a newcomer and forgets the first one silent long enough', () => {
    const rings = new HistoryRings(10, 100, 3, FORGET_MS);
    for (const id of ['a', 'b', 'c']) hear(rings, id, 0);
    hear(rings, 'a', 500);
    hear(rings, 'c', 900);
    assert.equal(rings.ringOf('d', 900), undefined, 'all three heard within the last second');
    // At 1 100 ms b has been silent 1 100 ms; a (made first) has been silent only 600 ms.
    assert.ok(hear(rings, 'd', 1100));
    assert.deepEqual(rings.deviceIds().sort(), ['a', 'c', 'd']);
    assert.equal(rings.get('b'), undefined);
    assert.equal(rings.get('a')?.newest()?.t, 500, 'a kept its samples');
  });

  it('does not look again before the soonest held device could have been silent long enough', () => {
    const rings = new HistoryRings(10, 100, 2, FORGET_MS);
    hear(rings, 'a', 0);
    hear(rings, 'b', 300);
    assert.equal(rings.ringOf('c', 400), undefined);
    // a was last heard at 0: forgettable from 1 000 on, not before, even though a falls silent now.
    assert.equal(rings.ringOf('c', 999), undefined);
    assert.ok(rings.ringOf('c', 1000));
    assert.deepEqual(rings.deviceIds().sort(), ['b', 'c']);
  });

  it('a device heard again after the look is not forgotten at the time the look computed', () => {
    const rings = new HistoryRings(10, 100, 2, FORGET_MS);
    hear(rings, 'a', 0);
    hear(rings, 'b', 100);
    assert.equal(rings.ringOf('c', 200), undefined);
    hear(rings, 'a', 900);
    // At 1 050 a was heard 150 ms ago, b 950 ms ago: neither goes.
    assert.equal(rings.ringOf('c', 1050), undefined);
    // At 1 100 b has been silent a second: it makes room, a stays.
    assert.ok(rings.ringOf('c', 1100));
    assert.deepEqual(rings.deviceIds().sort(), ['a', 'c']);
  });

  it('forgets the devices one pass found silent one per newcomer, except one heard again since', () => {
    const rings = new HistoryRings(10, 100, 4, FORGET_MS);
    for (const id of ['a', 'b', 'c', 'd']) hear(rings, id, 0);
    hear(rings, 'd', 900);
    // At 1 000 a, b and c are silent long enough: e takes a's place (held longest).
    assert.ok(hear(rings, 'e', 1000));
    assert.equal(rings.get('a'), undefined);
    // b talks again before the next newcomer: c goes instead.
    hear(rings, 'b', 1050);
    assert.ok(hear(rings, 'f', 1100));
    assert.deepEqual(rings.deviceIds().sort(), ['b', 'd', 'e', 'f']);
    // Nobody silent now: b is forgettable at 2 050, d at 1 900.
    assert.equal(rings.ringOf('g', 1899), undefined);
    assert.ok(rings.ringOf('g', 1900));
    assert.equal(rings.get('d'), undefined);
  });
});
