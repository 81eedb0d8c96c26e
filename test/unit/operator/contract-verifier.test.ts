import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { formatReport, verifyContract } from '../../../operator/src/contract-verifier.js';
import { examples } from '../../support/contract-examples.js';

/**
 * Runs the verifier over a memory bus with mocked time: `publish` sends its messages once the
 * verifier has subscribed, then the sampling window of `seconds` elapses at once.
 */
async function measure(seconds: number, publish: (bus: MemoryBus) => Promise<void>) {
  mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  try {
    const bus = new MemoryBus();
    // Publishing starts once the verifier subscribed to both topics, however many steps that takes.
    const subscribed = new Set<string>();
    let ready!: () => void;
    const bothSubscribed = new Promise<void>((resolve) => (ready = resolve));
    const subscribe = bus.subscribe.bind(bus);
    bus.subscribe = async (filter, handler) => {
      const off = await subscribe(filter, handler);
      subscribed.add(filter);
      if (subscribed.has('devices/cam-1/telemetry') && subscribed.has('devices/cam-1/dets')) ready();
      return off;
    };
    const pending = verifyContract({ bus, deviceId: 'cam-1', durationMs: seconds * 1000 });
    await bothSubscribed;
    await publish(bus);
    mock.timers.tick(seconds * 1000);
    return await pending;
  } finally {
    mock.timers.reset();
  }
}

const send = async (bus: MemoryBus, suffix: 'telemetry' | 'dets', valid: number, invalid: number) => {
  for (let i = 0; i < valid; i++) await bus.publish(`devices/cam-1/${suffix}`, JSON.stringify(examples[suffix]()));
  for (let i = 0; i < invalid; i++) await bus.publish(`devices/cam-1/${suffix}`, '{not json');
};

test('79.5% valid fails the 80% bound, and the report does not print it as 80%', async () => {
  // 159 of 200 valid at 10 Hz: the raw ratio 0.795 is below 0.8; rounded to 0.8 it used to pass.
  const report = await measure(20, async (bus) => {
    await send(bus, 'telemetry', 159, 41);
    await send(bus, 'dets', 200, 0);
  });
  const telemetry = report.topics.find((t) => t.topic === 'devices/cam-1/telemetry')!;
  assert.equal(telemetry.valid_ratio, 0.795);
  assert.equal(report.passed, false);
  assert.deepEqual(telemetry.failures, ['only 79.5% of samples valid (at least 80% required)']);
  assert.match(formatReport(report), /159 valid \(79\.5%\)/);
  assert.deepEqual(report.topics.find((t) => t.topic === 'devices/cam-1/dets')!.failures, []);
});

test('a rate of 2.996 Hz fails the 3 Hz bound and prints as 2.996, not 3', async () => {
  const report = await measure(1000, async (bus) => {
    await send(bus, 'telemetry', 2996, 0);
    await send(bus, 'dets', 10_000, 0);
  });
  const telemetry = report.topics.find((t) => t.topic === 'devices/cam-1/telemetry')!;
  assert.equal(telemetry.rate_hz, 2.996);
  assert.equal(report.passed, false);
  assert.deepEqual(telemetry.failures, ['rate 2.996 Hz outside 3-15 Hz']);
  assert.match(formatReport(report), /2996 samples, 2996 valid \(100%\), 2\.996 Hz — FAIL/);
  assert.match(formatReport(report), /dets: 10000 samples, 10000 valid \(100%\), 10 Hz — ok/);
});

test('exactly at the bounds passes; the JSON report speaks snake_case', async () => {
  const report = await measure(10, async (bus) => {
    await send(bus, 'telemetry', 24, 6);
    await send(bus, 'dets', 150, 0);
  });
  assert.equal(report.passed, true, JSON.stringify(report));
  assert.deepEqual(report.bounds, { min_hz: 3, max_hz: 15, min_valid_ratio: 0.8 });
  assert.equal(report.duration_s, 10);
  assert.equal(report.device_id, 'cam-1');
  const keys = (v: unknown): string[] =>
    Array.isArray(v) ? v.flatMap(keys) : v && typeof v === 'object' ? Object.entries(v).flatMap(([k, x]) => [k, ...keys(x)]) : [];
  assert.deepEqual(
    keys(report).filter((k) => !/^[a-z0-9_]+$/.test(k)),
    [],
  );
  assert.ok(keys(report).includes('valid_ratio') && keys(report).includes('rate_hz') && keys(report).includes('invalid_reasons'));
});
