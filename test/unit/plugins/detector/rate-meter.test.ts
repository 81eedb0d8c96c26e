import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CounterRate, RateMeter } from '../../../../plugins/detector/src/rate-meter.js';

describe('RateMeter: frames that own their periods', () => {
  it('reports the stride a frame ran at from the first frame on, not 0 and not the inverse of a short frame', () => {
    const m = new RateMeter(2000);
    assert.equal(m.rate(0), 0, 'nothing measured yet');
    m.mark(0, 100); // a 10 Hz frame that took 20 ms
    assert.equal(m.rate(20), 10);
    m.mark(100, 100);
    assert.equal(m.rate(120), 10);
  });

  it('is over the frames seen so far while the first window fills, then over the window', () => {
    const m = new RateMeter(2000);
    for (let i = 0; i < 5; i++) m.mark(i * 200, 200); // 5 Hz
    assert.equal(m.rate(820), 5);
    for (let i = 5; i < 40; i++) m.mark(i * 100, 100); // then 10 Hz for 3.5 s
    assert.equal(m.rate(3920), 10);
  });

  it('counts a frame that overran its period for the time it really took', () => {
    const m = new RateMeter(2000);
    m.mark(0, 100);
    assert.equal(Math.round(m.rate(250) * 100) / 100, 4, 'one frame in 250 ms');
  });

  it('decays to the lower rate after a stride change, and starts over after a reset', () => {
    const m = new RateMeter(2000);
    for (let i = 0; i < 30; i++) m.mark(i * 100, 100);
    let t = 2900;
    for (let i = 1; i <= 15; i++) m.mark((t += 200), 200);
    assert.equal(m.rate(t + 10), 5);
    m.reset();
    assert.equal(m.rate(t + 20), 0);
    m.mark(t + 500, 100);
    assert.equal(m.rate(t + 520), 10);
  });
});

describe('CounterRate: a camera frame counter', () => {
  it('is unknown until two samples, then frames delivered per second over the window', () => {
    const c = new CounterRate(2000);
    assert.equal(c.rate(), null);
    c.sample(30, 1000);
    assert.equal(c.rate(), null);
    c.sample(33, 1100);
    assert.equal(Math.round(c.rate()!), 30);
    for (let t = 1200; t <= 5000; t += 100) c.sample(Math.floor((t * 15) / 1000), t);
    assert.equal(Math.round(c.rate()!), 15, 'the older 30 Hz samples left the window');
  });

  it('starts a new series when the counter goes back (a restarted source)', () => {
    const c = new CounterRate(2000);
    c.sample(500, 0);
    c.sample(510, 1000);
    c.sample(2, 1100);
    assert.equal(c.rate(), null);
  });
});
