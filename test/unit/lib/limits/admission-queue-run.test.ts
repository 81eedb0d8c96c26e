/**
 * AdmissionQueue.run (what the hub's transcodes and incident analyses go through) under the races a burst of requests makes: a call arriving while a waiter resumes
 * waits too (never max + 1 at once), a call past the queue bound is refused, an aborted waiter
 * leaves the queue.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { AdmissionQueue } from '../../../../lib/limits/admission-queue.js';

describe('AdmissionQueue.run', () => {
  it('hands a finished slot to the waiter: a call arriving as it resumes waits (never max + 1)', async () => {
    const limiter = new AdmissionQueue({ concurrency: 1, maxWaiting: Infinity });
    let running = 0;
    let peak = 0;
    const task = async () => {
      running++;
      peak = Math.max(peak, running);
      await delay(10);
      running--;
    };
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const a = limiter.run(() => gate);
    const b = limiter.run(task);
    // Runs right after A's task settles and its slot is released, before B resumes.
    const c = gate.then(() => limiter.run(task));
    open();
    await Promise.all([a, b, c]);
    assert.equal(peak, 1);
    assert.equal(limiter.active, 0);
    assert.equal(limiter.waiting, 0);
  });

  it('refuses a call past the queue bound with its busy error, and takes calls again once it drains', async () => {
    const limiter = new AdmissionQueue({ concurrency: 1, maxWaiting: 2 });
    const busy = (active: number, queued: number) => new Error(`busy ${active}/${queued}`);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const runs = [limiter.run(() => gate), limiter.run(() => gate), limiter.run(() => gate)];
    await assert.rejects(
      limiter.run(() => gate, undefined, busy),
      /busy 1\/2/,
    );
    open();
    await Promise.all(runs);
    await limiter.run(async () => undefined);
  });

  it('drops a waiter whose signal aborts: it never runs, the queue shrinks', async () => {
    const limiter = new AdmissionQueue({ concurrency: 1, maxWaiting: Infinity });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const first = limiter.run(() => gate);
    const abort = new AbortController();
    let ran = false;
    const waiting = limiter.run(async () => {
      ran = true;
    }, abort.signal);
    assert.equal(limiter.waiting, 1);
    abort.abort(new Error('client went away'));
    await assert.rejects(waiting, /client went away/);
    assert.equal(limiter.waiting, 0);
    open();
    await first;
    assert.equal(ran, false);
    assert.equal(limiter.active, 0);
  });

  it('refuses an already aborted call before it takes a slot, with the reason as an Error', async () => {
    const limiter = new AdmissionQueue({ concurrency: 1, maxWaiting: 0 });
    const abort = new AbortController();
    abort.abort('gone');
    await assert.rejects(
      limiter.run(async () => assert.fail('ran'), abort.signal),
      (e: unknown) => e instanceof Error && e.message === 'gone',
    );
    assert.equal(limiter.active, 0);
  });
});
