import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SampleClock, type SampleTime } from '../../../../../hub/plugins/live-mp4/src/sample-clock.js';

const FRAME = 9000; // 10 fps at 90 kHz

/** Chromium's MSE rule: a decode-time step over twice the previous sample's duration is a discontinuity. */
function discontinuities(times: SampleTime[]): number {
  let n = 0;
  for (let i = 1; i < times.length; i++) if (times[i].decodeTime - times[i - 1].decodeTime > 2 * times[i - 1].duration) n++;
  return n;
}

function contiguous(times: SampleTime[]): void {
  for (let i = 1; i < times.length; i++) assert.equal(times[i].decodeTime, times[i - 1].decodeTime + times[i - 1].duration, `picture ${i}`);
}

test('sample clock: capture jitter of ±40 ms at 10 fps gives a gapless timeline of nominal pictures, within 1.5 frames of the camera', () => {
  const clock = new SampleClock();
  clock.setRate(10);
  const rtp = (n: number) => (n * FRAME + Math.round(3600 * Math.sin(n * 2.39996))) >>> 0;
  const times = Array.from({ length: 300 }, (_, n) => clock.place(rtp(n)));
  contiguous(times);
  assert.equal(discontinuities(times), 0);
  assert.ok(
    times.every((t) => t.duration === FRAME),
    'every picture lasts the nominal frame time',
  );
  for (const [n, t] of times.entries()) assert.ok(Math.abs(t.decodeTime - (rtp(n) - rtp(0))) <= 1.5 * FRAME + 3600, `picture ${n} strayed`);
});

test('sample clock: pictures the camera dropped lengthen one picture, and the timeline is back on the camera’s time', () => {
  const clock = new SampleClock();
  clock.setRate(10);
  const frames = [0, 1, 2, 3, 7, 8, 9]; // 4, 5 and 6 never came
  const times = frames.map((n) => clock.place(n * FRAME));
  contiguous(times);
  assert.equal(discontinuities(times), 0);
  assert.deepEqual(
    times.map((t) => t.duration),
    [FRAME, FRAME, FRAME, FRAME, 4 * FRAME, FRAME, FRAME],
  );
  assert.equal(times[5].decodeTime, 8 * FRAME, 'on the camera’s time again');
});

test('sample clock: a camera a little slower than announced is followed without drift; the RTP clock wraps', () => {
  const clock = new SampleClock();
  clock.setRate(10);
  const start = 2 ** 32 - 50 * FRAME;
  const times = Array.from({ length: 200 }, (_, n) => clock.place((start + Math.round(n * FRAME * 1.05)) >>> 0));
  contiguous(times);
  assert.equal(discontinuities(times), 0);
  const last = times.at(-1)!;
  assert.ok(Math.abs(last.decodeTime - Math.round(199 * FRAME * 1.05)) <= 1.5 * FRAME, `drift ${last.decodeTime - 199 * FRAME * 1.05}`);
});

test('sample clock: with no announced rate it takes the median gap; a new RTP base neither jumps nor stretches', () => {
  const clock = new SampleClock();
  const gap = 3000; // 30 fps
  const times = [
    ...Array.from({ length: 20 }, (_, n) => clock.place(1000 + n * gap)),
    // The camera restarted its RTP clock far away.
    ...Array.from({ length: 5 }, (_, n) => clock.place(123_456_789 + n * gap)),
  ];
  assert.equal(clock.frameTicks, gap);
  contiguous(times);
  assert.equal(discontinuities(times), 0);
  assert.ok(times.slice(20).every((t) => t.duration === gap));
});
