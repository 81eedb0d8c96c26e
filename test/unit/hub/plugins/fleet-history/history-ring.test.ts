import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HistoryRing } from '../../../../../hub/plugins/fleet-history/src/history-ring.js';

const reading = (t: number, temp: number | null, persons: number | null = null) => ({
  t,
  die_temp_c: temp,
  camera_fps: 10,
  detection_fps: 5,
  person_count: persons,
});

describe('history ring', () => {
  it('keeps one sample per step: the step’s last reading, and its most persons', () => {
    const ring = new HistoryRing(10, 1000);
    ring.add(reading(1000, 40, 3));
    ring.add(reading(1500, 41, 1));
    ring.add(reading(1900, null, 2));
    ring.add(reading(2100, 42, 0));
    const list = ring.list();
    assert.equal(list.length, 2);
    assert.deepEqual([list[0].t, list[0].die_temp_c, list[0].person_count], [1900, 41, 3]);
    assert.deepEqual([list[1].t, list[1].die_temp_c, list[1].person_count], [2100, 42, 0]);
  });

  it('is bounded: the oldest steps go first; since filters strictly', () => {
    const ring = new HistoryRing(3, 1000);
    for (let i = 0; i < 7; i++) ring.add(reading(i * 1000, i));
    assert.deepEqual(
      ring.list().map((s) => s.die_temp_c),
      [4, 5, 6],
    );
    assert.deepEqual(
      ring.list(5000).map((s) => s.t),
      [6000],
    );
  });

  it('never moves back in time (a retained message replayed), and hands out copies', () => {
    const ring = new HistoryRing(5, 1000);
    ring.add(reading(5000, 50));
    ring.add(reading(1000, 10));
    const [only] = ring.list();
    assert.equal(only.die_temp_c, 50);
    only.die_temp_c = 99;
    assert.equal(ring.list()[0].die_temp_c, 50);
  });
});
