import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedRateLimiter } from '../../../../core/src/util/keyed-rate-limiter.js';

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
});
