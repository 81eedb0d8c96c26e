import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedRateLimiter } from '../../../../lib/limits/keyed-rate-limiter.js';

describe('KeyedRateLimiter', () => {
  it('allows a burst per key, then the rate, and says how many were refused before the next allowed', () => {
    const limiter = new KeyedRateLimiter({ burst: 3, perSecond: 2 });
    assert.deepEqual(
      [0, 0, 0, 0, 0].map(() => limiter.take('a', 0)),
      [0, 0, 0, false, false],
    );
    assert.equal(limiter.take('b', 0), 0, 'another key has its own bucket');
    assert.equal(limiter.take('a', 499), false, 'less than one token back after 499 ms at 2/s');
    assert.equal(limiter.take('a', 500), 3, 'one token back; three were refused before it');
    assert.equal(limiter.take('a', 500), false);
    assert.equal(limiter.take('a', 60_000), 1, 'refills to the burst, no more');
    assert.equal(limiter.take('a', 60_000), 0);
    assert.equal(limiter.take('a', 60_000), 0);
    assert.equal(limiter.take('a', 60_000), false);
    assert.equal(limiter.refusedTotal, 5);
  });

  it('tracks at most maxKeys, forgetting the least recently seen; a clock stepping back refills nothing', () => {
    const limiter = new KeyedRateLimiter({ burst: 1, perSecond: 1, maxKeys: 2 });
    assert.equal(limiter.take('a', 1000), 0);
    assert.equal(limiter.take('b', 1000), 0);
    assert.equal(limiter.take('a', 0), false, 'seen again (and a step back of the clock gives no token)');
    assert.equal(limiter.take('c', 1000), 0, 'b is forgotten, not a');
    assert.equal(limiter.size, 2);
    assert.equal(limiter.take('a', 1000), false);
    assert.equal(limiter.take('b', 1000), 0, 'b starts again with a full bucket');
  });

  it('a burst of 0 limits nothing', () => {
    const limiter = new KeyedRateLimiter({ burst: 0, perSecond: 1 });
    for (let i = 0; i < 100; i++) assert.equal(limiter.take('a', 0), 0);
  });

  it('one fixed key is a single gate (the edge bounds its replies to garbage so); its clock can be given', () => {
    let now = 0;
    const gate = new KeyedRateLimiter({ burst: 2, perSecond: 2 }, () => now);
    assert.deepEqual([gate.take('reply'), gate.take('reply'), gate.take('reply'), gate.take('reply')], [0, 0, false, false]);
    now = 1000;
    assert.equal(gate.take('reply'), 2, 'a second later: allowed again, and two were refused before it');
    assert.equal(gate.take('reply'), 0);
    assert.equal(gate.take('reply'), false);
    assert.equal(gate.take('reply', 2000), 1, 'a time given to take wins over the clock');
  });

  it('reads the monotonic clock when given no time', () => {
    const gate = new KeyedRateLimiter({ burst: 1, perSecond: 0.001 });
    assert.equal(gate.take('a'), 0);
    assert.equal(gate.take('a'), false, 'no token back within a test run at one per 1 000 s');
  });

  it('a flood from one key is cut at the burst within the second; one from spoofed keys holds at most maxKeys', () => {
    const limiter = new KeyedRateLimiter({ burst: 20, perSecond: 20, maxKeys: 1024 });
    let allowed = 0;
    for (let i = 0; i < 2000; i++) if (limiter.take('127.0.0.9', 5000) !== false) allowed++;
    assert.equal(allowed, 20);
    assert.equal(limiter.refusedTotal, 1980);
    for (let i = 0; i < 5000; i++) limiter.take(`10.0.${i >> 8}.${i & 255}`, 5000);
    assert.equal(limiter.size, 1024);
  });
});
