import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RatePace } from '../../../../../hub/plugins/fleet-events/src/rate-pace.js';

/** Arrival times of a stream every `periodMs`, each off by up to `jitterMs` either way (a fixed pattern). */
function arrivals(count: number, periodMs: number, jitterMs: number): number[] {
  return Array.from({ length: count }, (_, i) => 1_000 + i * periodMs + jitterMs * Math.sin(i * 2.3));
}

test('a device detecting 5 times a second, thinned to 5 a second, keeps every dets though arrivals jitter', () => {
  const pace = new RatePace(200);
  const passed = arrivals(300, 200, 15).filter((t) => pace.take('cam-a', t));
  assert.equal(passed.length, 300);
});

test('a faster stream is thinned to the period on average, each key on its own', () => {
  const pace = new RatePace(200);
  const fast = arrivals(1000, 50, 10);
  const passed = fast.filter((t) => pace.take('cam-a', t));
  const spanS = (fast.at(-1)! - fast[0]) / 1000;
  assert.ok(passed.length <= spanS * 5 + 2 && passed.length >= spanS * 5 - 2, `${passed.length} in ${spanS} s`);
  // No two closer than half a period.
  for (let i = 1; i < passed.length; i++) assert.ok(passed[i] - passed[i - 1] >= 100, `${passed[i] - passed[i - 1]} ms apart`);
  assert.equal(pace.take('cam-b', fast.at(-1)!), true, 'another device is not held back');
});

test('a period of 0 lets everything through', () => {
  const pace = new RatePace(0);
  assert.ok([5, 5, 6, 6].every((t) => pace.take('cam-a', t)));
});
