import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_THERMAL_THRESHOLDS,
  ThermalStateMachine,
  checkThermalThresholds,
  nextThermalState,
  throttleFor,
} from '../../../../plugins/thermal/src/governor-state-machine.js';
import { Governor } from '../../../../plugins/thermal/src/governor.js';
import type { ThermalState } from '../../../../plugins/thermal/src/service.js';
import type { DetectionThrottle } from '../../../../plugins/detector/src/service.js';
import { isLookoutError } from '../../../../core/src/errors/lookout-error.js';

const T = { warnC: 75, criticalC: 85, hysteresisC: 5 };
const N: ThermalState = 'NORMAL';
const W: ThermalState = 'THERMAL_WARN';
const C: ThermalState = 'THERMAL_CRITICAL';

test('every state x every temperature band, boundaries included', () => {
  // Bands: below warn-h | [warn-h, warn) | [warn, crit-h) | [crit-h, crit) | crit and above.
  const readings = [20, 69.99, 70, 72, 74.99, 75, 77, 79.99, 80, 82, 84.99, 85, 90, 120];
  const expected: Record<ThermalState, ThermalState[]> = {
    NORMAL: [N, N, N, N, N, W, W, W, W, W, W, C, C, C],
    THERMAL_WARN: [N, N, W, W, W, W, W, W, W, W, W, C, C, C],
    THERMAL_CRITICAL: [N, N, W, W, W, W, W, W, C, C, C, C, C, C],
  };
  for (const from of [N, W, C]) {
    readings.forEach((celsius, i) => {
      assert.equal(nextThermalState(from, celsius, T), expected[from][i], `${from} at ${celsius} C`);
    });
  }
});

test('zero hysteresis switches exactly at the thresholds', () => {
  const t = { ...T, hysteresisC: 0 };
  assert.equal(nextThermalState(W, 74.99, t), N);
  assert.equal(nextThermalState(W, 75, t), W);
  assert.equal(nextThermalState(C, 84.99, t), W);
  assert.equal(nextThermalState(C, 74.99, t), N);
});

test('a temperature script walks up through every state and back down with hysteresis', () => {
  const m = new ThermalStateMachine(T);
  const script: Array<[number, ThermalState, boolean]> = [
    [60, N, false],
    [74, N, false],
    [75, W, true], // enters WARN at the threshold
    [72, W, false], // holds inside the band
    [76, W, false],
    [84, W, false],
    [85, C, true], // enters CRITICAL
    [81, C, false], // holds: not yet below 80
    [86, C, false],
    [79.5, W, true], // below 85 - 5: back to WARN
    [74, W, false], // still within 75 - 5
    [69.9, N, true], // below 70: NORMAL
    [74.9, N, false], // rising again below the warn threshold stays NORMAL
    [95, C, true], // a jump skips WARN
    [40, N, true], // and a plunge skips it on the way down
  ];
  script.forEach(([celsius, state, changed], i) => {
    const r = m.feed(celsius);
    assert.equal(r.state, state, `step ${i} (${celsius} C)`);
    assert.equal(r.changed, changed, `step ${i} changed`);
  });
});

test('throttle per state', () => {
  assert.deepEqual(throttleFor(N, { warnStrideFps: 4 }), { suspended: false });
  assert.deepEqual(throttleFor(W, { warnStrideFps: 4 }), { strideFps: 4, suspended: false });
  assert.deepEqual(throttleFor(C, { warnStrideFps: 4 }), { suspended: true });
});

test('bad thresholds and readings are typed errors; the state is kept', () => {
  assert.throws(
    () => checkThermalThresholds({ warnC: 85, criticalC: 85, hysteresisC: 5 }),
    (e) => isLookoutError(e, 'config_invalid') && /below the critical/.test(e.message),
  );
  assert.throws(
    () => checkThermalThresholds({ warnC: 70, criticalC: 85, hysteresisC: -1 }),
    (e) => isLookoutError(e, 'config_invalid'),
  );
  assert.throws(
    () => new ThermalStateMachine({ warnC: NaN, criticalC: 85, hysteresisC: 1 }),
    (e) => isLookoutError(e, 'config_invalid') && /warnC/.test(e.message),
  );
  const m = new ThermalStateMachine(DEFAULT_THERMAL_THRESHOLDS);
  m.feed(80);
  assert.throws(
    () => m.feed(NaN),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
  assert.equal(m.state, W);
});

test('governor: throttles the detector before telling listeners, only on changes', () => {
  const events: string[] = [];
  const throttles: DetectionThrottle[] = [];
  const g = new Governor({
    thresholds: T,
    policy: { warnStrideFps: 5 },
    applyThrottle: (t) => {
      throttles.push(t);
      events.push(`throttle ${JSON.stringify(t)}`);
    },
  });
  assert.deepEqual(throttles, [{ suspended: false }], 'the initial throttle restores the full stride');
  const off = g.onChange((state, celsius) => events.push(`${state} ${celsius}`));
  for (const c of [60, 76, 77, 86, 82, 79, 60]) g.feed(c);
  assert.deepEqual(events, [
    'throttle {"suspended":false}',
    'throttle {"strideFps":5,"suspended":false}',
    'THERMAL_WARN 76',
    'throttle {"suspended":true}',
    'THERMAL_CRITICAL 86',
    'throttle {"strideFps":5,"suspended":false}',
    'THERMAL_WARN 79',
    'throttle {"suspended":false}',
    'NORMAL 60',
  ]);
  assert.equal(g.state(), N);
  assert.equal(g.celsius(), 60);
  off();
  g.feed(90);
  assert.equal(events.at(-1), 'throttle {"suspended":true}', 'an unsubscribed listener hears nothing');
});

test('governor: a failing listener does not stop the others', () => {
  const errors: unknown[] = [];
  const heard: ThermalState[] = [];
  const g = new Governor({ thresholds: T, policy: { warnStrideFps: 5 }, onListenerError: (e) => errors.push(e) });
  g.onChange(() => {
    throw new Error('boom');
  });
  g.onChange((s) => heard.push(s));
  g.feed(88);
  assert.deepEqual(heard, [C]);
  assert.equal(errors.length, 1);
});
