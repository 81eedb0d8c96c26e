import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contradiction, statedCounts } from '../../../../plugins/safety-query/src/count-check.js';
import { safetyState } from '../../../../plugins/safety-query/src/safety-state.js';

const state = safetyState({
  deviceId: 'cam-1',
  latest: {
    timestamp: '2026-01-01T00:00:00.000Z',
    dets: [
      { c: 0, p: 0.9, b: [0, 0, 1, 1], track_id: 4 },
      { c: 0, p: 0.8, b: [0, 0, 1, 1], track_id: 5 },
      { c: 0, p: 0.1, b: [0, 0, 1, 1] },
      { c: 11, p: 0.7, b: [0, 0, 1, 1] },
    ],
  },
  detection: 'running',
  suspendedSince: null,
  thermalState: 'NORMAL',
  thermalReason: null,
  dieTempC: 61,
  weaponGate: 0.5,
  recording: null,
  recordingReason: 'no recorder runs on this device',
});

describe('safety-query count check', () => {
  it('counts persons over the detector gate only, weapons over their gate', () => {
    assert.equal(state.person_count, 2);
    assert.deepEqual(state.weapons, { detected: true, gate: 0.5, count: 1, labels: ['knife'] });
    assert.deepEqual(state.track_ids, [4, 5]);
  });
  it('reads counts in digits and words, not temperatures', () => {
    assert.deepEqual(
      statedCounts('Two people and 1 knife; the die is at 61 degrees.').map((c) => [c.value, c.kind]),
      [
        [2, 'person'],
        [1, 'weapon'],
      ],
    );
  });
  it('accepts the device counts and refuses another', () => {
    assert.equal(contradiction('Two people are at the door with a knife.', state), null);
    assert.match(contradiction('Three people are at the door.', state) ?? '', /three people/);
    assert.match(contradiction('There are no weapons.', state) ?? '', /no weapons/);
    assert.match(contradiction('Nobody is there, 0 persons.', state) ?? '', /0 persons/);
  });
});
