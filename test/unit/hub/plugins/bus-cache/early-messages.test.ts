import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../../../core/src/log/logger.js';
import { MemoryDebugRing } from '../../../../../hub/plugins/debug-ring/src/debug-ring.js';
import { Ingest } from '../../../../../hub/plugins/bus-cache/src/ingest.js';
import type { HoldLimits } from '../../../../../hub/plugins/bus-cache/src/early-messages.js';
import type { IngestedMessage } from '../../../../../hub/plugins/bus-cache/src/service.js';
import { msg } from '../../../../support/hub-helpers.js';

const T0 = Date.parse('2026-11-24T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * An ingest on a clock the test moves, after start-up (settled) unless told: hub replicas apply one
 * shared stream, and a device's hello taken by one replica can land in it after its telemetry taken
 * by another.
 */
function ingestOnClock(hold: Partial<HoldLimits> = {}, options: { settled?: boolean } = {}) {
  const clock = { now: T0 };
  const ring = new MemoryDebugRing(1000, { now: () => clock.now });
  const ingest = new Ingest(
    { maxMessageBytes: 256 * 1024, maxDepth: 32, maxDevices: 1000, maxTopicsPerDevice: 64, maxAlerts: 20, maxChunks: 20, hold: { windowMs: 1000, ...hold } },
    { ring, log: createLogger({ level: 'silent' }), now: () => clock.now, connected: () => true },
  );
  if (options.settled !== false) ingest.settle();
  const seen: IngestedMessage[] = [];
  ingest.on('*', (m) => seen.push(m));
  const send = (id: string, suffix: string, body: unknown) => ingest.handle(`devices/${id}/${suffix}`, Buffer.from(JSON.stringify(body)), { retain: false });
  const telemetry = (seq: number, pad = 0) => ({ ...msg.telemetry(), timestamp: iso(clock.now), seq, ...(pad ? { pad: 'x'.repeat(pad) } : {}) });
  const status = (id: string) => ({ ...msg.status(id), timestamp: iso(clock.now) });
  const hello = (id: string) => ({ ...msg.hello(id, ['127.0.0.1'], 9001), timestamp: iso(clock.now) });
  const refusedEvents = (id: string) =>
    ring.query({ kinds: ['ingest_invalid'], device: undefined, limit: 1000 }).events.filter((e) => e.topic?.startsWith(`devices/${id}/`));
  return { clock, ingest, ring, seen, send, telemetry, status, hello, refusedEvents };
}

describe('messages of a device not known yet wait for its hello (reorder window)', () => {
  it('status and telemetry applied before the hello are in the latest cache once it comes, in order, with their counts', () => {
    const t = ingestOnClock();
    t.send('cam-1', 'status', t.status('cam-1'));
    t.clock.now += 100;
    t.send('cam-1', 'telemetry', t.telemetry(1));
    t.clock.now += 100;
    t.send('cam-1', 'telemetry', t.telemetry(2));
    assert.equal(t.ingest.devices.get('cam-1'), undefined, 'not listed before it is known');
    assert.equal(t.ingest.refusedUnknown, 0, 'waiting, not refused');
    assert.equal(t.ingest.status().messages, 3);
    t.clock.now += 500;
    t.send('cam-1', 'hello', t.hello('cam-1'));
    const d = t.ingest.devices.get('cam-1');
    assert.ok(d, 'listed once its hello came');
    assert.equal(d.latest.get('telemetry')?.message.seq, 2);
    assert.equal(d.latest.get('telemetry')?.count, 2);
    assert.equal(d.latest.get('telemetry')?.receivedAt, T0 + 200, 'dated when it arrived, not when its hello came');
    assert.equal(d.latest.get('status')?.count, 1);
    assert.equal(d.latest.get('status')?.message.state, 'online');
    assert.equal(d.latest.get('hello')?.count, 1);
    // The hello first (the device sent it first), then what waited, in arrival order.
    assert.deepEqual(
      t.seen.map((m) => `${m.suffix}${typeof m.message.seq === 'number' ? m.message.seq : ''}`),
      ['hello', 'status', 'telemetry1', 'telemetry2'],
    );
    const s = t.ingest.status();
    assert.equal(s.messages, 4, 'each counted once, when it arrived');
    assert.equal(s.valid, 4);
    assert.equal(t.ingest.refusedUnknown, 0);
    assert.equal(t.ingest.heldUnknown, 0);
    // Nothing is left to expire: the window passing later refuses nothing.
    t.clock.now += 5000;
    t.ingest.expireHeld();
    assert.equal(t.ingest.refusedUnknown, 0);
    assert.equal(t.refusedEvents('cam-1').length, 0);
  });

  it('a device that never says hello: its messages are refused and counted once the window has passed, each at its own time', () => {
    const t = ingestOnClock();
    t.send('nobody', 'status', t.status('nobody'));
    t.clock.now += 600;
    t.send('nobody', 'telemetry', t.telemetry(1));
    assert.equal(t.ingest.heldUnknown, 2);
    t.clock.now = T0 + 999;
    t.ingest.expireHeld();
    assert.equal(t.ingest.refusedUnknown, 0, 'still within the window');
    t.clock.now = T0 + 1000;
    t.ingest.expireHeld();
    assert.equal(t.ingest.refusedUnknown, 1, 'the status waited its window');
    assert.equal(t.ingest.heldUnknown, 1);
    const details = t.refusedEvents('nobody')[0].details as { reason?: string; at?: string };
    assert.equal(details.reason, 'unknown_device');
    assert.equal(details.at, iso(T0), 'the ring says when it arrived');
    t.clock.now = T0 + 1600;
    t.ingest.expireHeld();
    assert.equal(t.ingest.refusedUnknown, 2);
    assert.equal(t.ingest.heldUnknown, 0);
    assert.deepEqual(
      t.refusedEvents('nobody').map((e) => e.topic),
      ['devices/nobody/status', 'devices/nobody/telemetry'],
    );
    assert.equal(t.ingest.devices.get('nobody'), undefined);
    assert.equal(t.ingest.status().valid, 0);
    // A hello after the window brings back nothing of what was refused.
    t.send('nobody', 'hello', t.hello('nobody'));
    assert.deepEqual([...(t.ingest.devices.get('nobody')?.latest.keys() ?? [])], ['hello']);
  });

  it('a hello after part of the window: what waited longer is refused, the rest is applied', () => {
    const t = ingestOnClock();
    t.send('cam-2', 'telemetry', t.telemetry(1));
    t.clock.now += 700;
    t.send('cam-2', 'telemetry', t.telemetry(2));
    t.clock.now += 400;
    t.ingest.expireHeld();
    t.send('cam-2', 'hello', t.hello('cam-2'));
    assert.equal(t.ingest.refusedUnknown, 1);
    const tel = t.ingest.devices.get('cam-2')?.latest.get('telemetry');
    assert.equal(tel?.message.seq, 2);
    assert.equal(tel?.count, 1);
  });

  it('a device the registry names while its messages wait: applied in order, before the message that found it known', () => {
    const t = ingestOnClock();
    t.send('named', 'telemetry', t.telemetry(1));
    t.clock.now += 10;
    t.send('named', 'telemetry', t.telemetry(2));
    t.ingest.admission.admitWhen((id) => id === 'named');
    t.clock.now += 10;
    t.send('named', 'telemetry', t.telemetry(3));
    const tel = t.ingest.devices.get('named')?.latest.get('telemetry');
    assert.equal(tel?.message.seq, 3);
    assert.equal(tel?.count, 3);
    assert.deepEqual(
      t.seen.map((m) => m.message.seq),
      [1, 2, 3],
    );
    // Named while its messages wait, and silent since: applied when their window ends, not refused.
    t.send('later', 'status', t.status('later'));
    t.ingest.admission.admitWhen((id) => id === 'later');
    t.clock.now += 1000;
    t.ingest.expireHeld();
    assert.equal(t.ingest.devices.get('later')?.latest.get('status')?.count, 1);
    assert.equal(t.ingest.refusedUnknown, 0);
  });

  it('while the hub starts nothing expires; at start-up’s end the named devices’ messages are applied and the others wait a window', () => {
    const t = ingestOnClock({}, { settled: false });
    t.send('named', 'status', t.status('named'));
    t.send('stranger', 'status', t.status('stranger'));
    t.clock.now += 10_000;
    t.ingest.expireHeld();
    assert.equal(t.ingest.refusedUnknown, 0, 'held for as long as the hub starts');
    t.ingest.admission.admitWhen((id) => id === 'named');
    t.ingest.settle();
    assert.equal(t.ingest.devices.get('named')?.latest.get('status')?.count, 1);
    assert.equal(t.ingest.devices.get('stranger'), undefined);
    t.clock.now += 999;
    t.ingest.expireHeld();
    assert.equal(t.ingest.refusedUnknown, 0, 'its window starts when the hub has started');
    t.send('stranger', 'hello', t.hello('stranger'));
    assert.equal(t.ingest.devices.get('stranger')?.latest.get('status')?.count, 1);
  });

  it('a window of 0 refuses an unknown device’s message at once, as before; what waited while the hub started, when it has', () => {
    const t = ingestOnClock({ windowMs: 0 });
    t.send('nobody', 'status', t.status('nobody'));
    assert.equal(t.ingest.refusedUnknown, 1);
    assert.equal(t.ingest.heldUnknown, 0);
    const starting = ingestOnClock({ windowMs: 0 }, { settled: false });
    starting.send('nobody', 'status', starting.status('nobody'));
    assert.equal(starting.ingest.refusedUnknown, 0, 'held while the hub starts');
    starting.ingest.settle();
    assert.equal(starting.ingest.refusedUnknown, 1);
    assert.equal(starting.ingest.heldUnknown, 0);
  });

  it('holds a bounded number of messages per device and in all; past a bound a message is refused at once', () => {
    const t = ingestOnClock({ maxPerDevice: 3, maxMessages: 20 });
    for (let i = 1; i <= 5; i++) t.send('chatty', 'telemetry', t.telemetry(i));
    assert.equal(t.ingest.heldUnknown, 3);
    assert.equal(t.ingest.refusedUnknown, 2, 'past the device’s bound: refused at once');
    // Many unknown devices: the total bound holds.
    for (let i = 0; i < 50; i++) t.send(`made-up-${i}`, 'status', t.status(`made-up-${i}`));
    assert.equal(t.ingest.heldUnknown, 20);
    assert.equal(t.ingest.refusedUnknown, 2 + 33);
    t.send('chatty', 'hello', t.hello('chatty'));
    const tel = t.ingest.devices.get('chatty')?.latest.get('telemetry');
    assert.equal(tel?.message.seq, 3, 'the first three waited; the later two were refused');
    assert.equal(tel?.count, 3);
    t.clock.now += 1000;
    t.ingest.expireHeld();
    assert.equal(t.ingest.refusedUnknown, 2 + 50, 'every made-up device’s message counted once');
    assert.equal(t.ingest.heldUnknown, 0);
  });

  it('holds a bounded number of bytes per device and in all', () => {
    const size = Buffer.byteLength(JSON.stringify(ingestOnClock().telemetry(1, 4_000)));
    // Room for two such messages per device, and six in all.
    const t = ingestOnClock({ maxBytesPerDevice: Math.floor(2.5 * size), maxBytes: Math.floor(6.5 * size) });
    for (let i = 1; i <= 3; i++) t.send('big-1', 'telemetry', t.telemetry(i, 4_000));
    assert.equal(t.ingest.heldUnknown, 2, 'the third is past the device’s bound');
    assert.equal(t.ingest.heldBytes, 2 * size);
    assert.equal(t.ingest.refusedUnknown, 1, 'refused at once');
    for (const id of ['big-2', 'big-3', 'big-4']) for (let i = 1; i <= 2; i++) t.send(id, 'telemetry', t.telemetry(i, 4_000));
    assert.equal(t.ingest.heldUnknown, 6, 'big-4’s are past the total bound');
    assert.equal(t.ingest.heldBytes, 6 * size);
    assert.equal(t.ingest.refusedUnknown, 1 + 2);
    // One bigger than a device may hold never waits, even for a device with nothing held.
    t.send('huge', 'telemetry', t.telemetry(1, 3 * size));
    assert.equal(t.ingest.refusedUnknown, 4);
    t.clock.now += 1000;
    t.ingest.expireHeld();
    assert.equal(t.ingest.heldBytes, 0);
    assert.equal(t.ingest.heldUnknown, 0);
    assert.equal(t.ingest.refusedUnknown, 10, 'each message counted once');
  });

  it('a device refused for want of room keeps nothing waiting and is counted as before', () => {
    const t = ingestOnClock();
    const full = new Ingest(
      { maxMessageBytes: 4096, maxDepth: 32, maxDevices: 1, maxTopicsPerDevice: 64, maxAlerts: 20, maxChunks: 20, hold: { windowMs: 1000 } },
      { log: createLogger({ level: 'silent' }), now: () => t.clock.now, connected: () => true },
    );
    full.settle();
    const send = (id: string, suffix: string, body: unknown) => full.handle(`devices/${id}/${suffix}`, Buffer.from(JSON.stringify(body)), { retain: false });
    send('first', 'hello', t.hello('first'));
    send('second', 'status', t.status('second'));
    send('second', 'hello', t.hello('second'));
    assert.equal(full.status().refusedDevices, 1);
    assert.equal(full.devices.get('second'), undefined);
    t.clock.now += 1000;
    full.expireHeld();
    assert.equal(full.refusedUnknown, 1, 'its status waited, then was refused as an unknown device’s');
    assert.equal(full.heldUnknown, 0);
  });
});
