import { test } from 'node:test';
import assert from 'node:assert/strict';
import { throttleFor } from '../../../../plugins/thermal/src/throttle-policy.js';
import { Governor } from '../../../../plugins/thermal/src/governor.js';
import type { ThermalState } from '../../../../plugins/thermal/src/service.js';
import type { DetectionThrottle } from '../../../../plugins/detector/src/service.js';
import { ThermalClassifier } from '../../../../plugins/die-temp/src/thermal-classifier.js';

const T = { warnC: 75, criticalC: 85, hysteresisC: 5 };
const N: ThermalState = 'NORMAL';
const W: ThermalState = 'THERMAL_WARN';
const C: ThermalState = 'THERMAL_CRITICAL';

/** The governor as the plugin wires it: acting on the die's thermal state (die-temp's classifier). */
function governed(options: ConstructorParameters<typeof Governor>[0]) {
  const die = new ThermalClassifier(T);
  const g = new Governor(options);
  die.onChange((state, celsius) => g.apply(state, celsius));
  return { g, feed: (celsius: number) => die.feed(celsius) };
}

test('throttle per state', () => {
  assert.deepEqual(throttleFor(N, { warnStrideFps: 4 }), { suspended: false });
  assert.deepEqual(throttleFor(W, { warnStrideFps: 4 }), { strideFps: 4, suspended: false });
  assert.deepEqual(throttleFor(C, { warnStrideFps: 4 }), { suspended: true });
});

test('governor: throttles the detector before telling listeners, only on changes', () => {
  const events: string[] = [];
  const throttles: DetectionThrottle[] = [];
  const { g, feed } = governed({
    policy: { warnStrideFps: 5 },
    applyThrottle: (t) => {
      throttles.push(t);
      events.push(`throttle ${JSON.stringify(t)}`);
    },
  });
  assert.deepEqual(throttles, [{ suspended: false }], 'the initial throttle restores the full stride');
  const off = g.onChange((state, celsius) => events.push(`${state} ${celsius}`));
  for (const c of [60, 76, 77, 86, 82, 79, 60]) feed(c);
  assert.deepEqual(events, [
    'throttle {"suspended":false}',
    'throttle {"suspended":false}',
    'NORMAL 60',
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
  feed(90);
  assert.equal(events.at(-1), 'throttle {"suspended":true}', 'an unsubscribed listener hears nothing');
});

test('governor: a failing listener does not stop the others', () => {
  const errors: unknown[] = [];
  const heard: ThermalState[] = [];
  const { g, feed } = governed({ policy: { warnStrideFps: 5 }, onListenerError: (e) => errors.push(e) });
  g.onChange(() => {
    throw new Error('boom');
  });
  g.onChange((s) => heard.push(s));
  feed(88);
  assert.deepEqual(heard, [C]);
  assert.equal(errors.length, 1);
});
