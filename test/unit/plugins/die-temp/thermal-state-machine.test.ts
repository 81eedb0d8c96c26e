import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ThermalStateMachine, nextThermalState } from '../../../../plugins/die-temp/src/thermal-state-machine.js';
import { DEFAULT_THERMAL_THRESHOLDS, checkThermalThresholds, thermalThresholdsFromEnv } from '../../../../plugins/die-temp/src/thermal-thresholds.js';
import type { ThermalState } from '../../../../plugins/die-temp/src/service.js';
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

test('bad thresholds and readings are typed errors; the state is kept', () => {
  assert.throws(
    () => checkThermalThresholds({ warnC: 85, criticalC: 85, hysteresisC: 5 }),
    (e) => isLookoutError(e, 'config_invalid') && /THERMAL_WARN_C .* must be below THERMAL_CRITICAL_C/.test(e.message),
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

test('thresholds from the layer env: defaults for unset keys, a bad value named with its key', () => {
  assert.deepEqual(thermalThresholdsFromEnv({}), DEFAULT_THERMAL_THRESHOLDS);
  assert.deepEqual(thermalThresholdsFromEnv({ THERMAL_WARN_C: '70', THERMAL_CRITICAL_C: ' 90 ', THERMAL_HYSTERESIS_C: '' }), {
    warnC: 70,
    criticalC: 90,
    hysteresisC: 5,
  });
  assert.throws(
    () => thermalThresholdsFromEnv({ THERMAL_CRITICAL_C: 'hot' }),
    (e) => isLookoutError(e, 'config_invalid') && /THERMAL_CRITICAL_C="hot" is not a number/.test(e.message),
  );
  assert.throws(
    () => thermalThresholdsFromEnv({ THERMAL_WARN_C: '90', THERMAL_CRITICAL_C: '85' }),
    (e) => isLookoutError(e, 'config_invalid') && /THERMAL_WARN_C/.test(e.message) && /THERMAL_CRITICAL_C/.test(e.message),
  );
});
