import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CropBudget } from '../../../../../plugins/trocr/src/cascade/crop-budget.js';
import { RateWindow } from '../../../../../plugins/trocr/src/cascade/rate-window.js';

test('crops per second are bounded: one second’s worth at once, refilled at the rate', () => {
  const budget = new CropBudget(4);
  assert.equal(budget.take(10, 0), 4, 'a full bucket');
  assert.equal(budget.take(1, 0), 0, 'then nothing');
  assert.equal(budget.take(5, 500), 2, 'half a second later: two');
  assert.equal(budget.take(5, 60_000), 4, 'a long quiet spell buys no burst beyond a second');
});

test('a rate under one per second still grants a whole crop once earned', () => {
  const budget = new CropBudget(0.5);
  assert.equal(budget.take(3, 0), 1);
  assert.equal(budget.take(3, 1000), 0);
  assert.equal(budget.take(3, 2000), 1);
  assert.throws(() => new CropBudget(0), RangeError);
});

test('crops per second are measured over a window, at least a second', () => {
  const rate = new RateWindow(10_000);
  assert.equal(rate.rate(0), 0);
  rate.mark(0);
  assert.equal(rate.rate(100), 1, 'the first crop is one per second, not ten');
  for (let t = 500; t <= 5000; t += 500) rate.mark(t);
  assert.equal(rate.rate(5000), 11 / 5);
  assert.equal(rate.rate(14_000), 2 / 10, 'older crops leave the window');
});
