import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionLimits } from '../../../../plugins/rtsp/src/connection-limits.js';
import { PreSessionClock } from '../../../../plugins/rtsp/src/pre-session-clock.js';
import { MAX_HEADERS, RtspReader } from '../../../../plugins/rtsp/src/rtsp-message.js';

test('connection limits: one address gets its own share, the others still get in, slots come back', () => {
  const limits = new ConnectionLimits(5, 2);
  assert.deepEqual([limits.admit('a'), limits.admit('a'), limits.admit('a')], [undefined, undefined, 'per_address']);
  assert.deepEqual([limits.admit('b'), limits.admit('c'), limits.admit('c')], [undefined, undefined, undefined]);
  assert.equal(limits.admit('d'), 'full', 'the cap in all');
  assert.equal(limits.admit('d', false), 'full', 'asked again without counting');
  assert.deepEqual(limits.refused, { total: 1, perAddress: 1 });
  limits.release('a');
  assert.equal(limits.admit('a'), undefined);
  limits.release('zz');
  assert.equal(limits.admit('e'), 'full', 'a release of an address that holds nothing frees nothing');
});

test('pre-session clock: runs out while the server waits for the client, not while it answers; a session gives a full budget back', () => {
  let now = 0;
  let fired = 0;
  const clock = new PreSessionClock(
    1000,
    () => fired++,
    () => now,
  );
  clock.run();
  now = 600;
  clock.pause();
  // The server answers for a minute (a DESCRIBE waiting for the first keyframe): not counted.
  now = 60_000;
  clock.run();
  now = 60_399;
  clock.pause();
  assert.equal(fired, 0, '999 ms of the client’s time: 1 left');
  // A session: the budget is full again when it ends.
  clock.reset();
  clock.run();
  now += 999;
  clock.pause();
  clock.run();
  now += 1;
  clock.pause();
  assert.equal(fired, 0);
  clock.run();
  assert.equal(fired, 1, 'spent: closed at the next wait');
  clock.stop();
});

test('pre-session clock: a spent budget closes at the next run; the timer fires on its own', async () => {
  let now = 0;
  let fired = 0;
  const clock = new PreSessionClock(
    200,
    () => fired++,
    () => now,
  );
  clock.run();
  now = 250;
  clock.pause();
  clock.run();
  assert.equal(fired, 1, 'no time left: closed at once');
  const real = new PreSessionClock(30, () => fired++);
  real.run();
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(fired, 2);
});

test('the request reader refuses more header lines than MAX_HEADERS, even inside the size bound', () => {
  const head = (n: number): Buffer => Buffer.from(`OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n${'X-A: b\r\n'.repeat(n - 1)}\r\n`);
  const ok = new RtspReader().push(head(MAX_HEADERS));
  assert.equal(ok[0].kind, 'request');
  const refused = new RtspReader().push(head(MAX_HEADERS + 1));
  assert.equal(refused[0].kind, 'malformed');
  assert.equal(refused[0].kind === 'malformed' && refused[0].reason, 'too many header lines');
});
