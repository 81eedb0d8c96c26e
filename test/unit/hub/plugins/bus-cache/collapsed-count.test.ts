/**
 * A hub replica that divides the apply (DeviceMirror) hands the cache the newest telemetry of a
 * device another replica owns, with how many earlier ones it stands for and the first of those:
 * the cache counts them as the owner, which applied each, does, a copy the broker sent again once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../../../../core/src/log/logger.js';
import { Ingest } from '../../../../../hub/plugins/bus-cache/src/ingest.js';
import { MirroredMessages } from '../../../../../hub/src/state/mirrored-messages.js';
import { msg } from '../../../../support/hub-helpers.js';

const T0 = Date.parse('2026-11-27T10:00:00.000Z');

function ingest() {
  const ingest = new Ingest(
    { maxMessageBytes: 256 * 1024, maxDepth: 32, maxDevices: 10, maxTopicsPerDevice: 64, maxAlerts: 20, maxChunks: 20 },
    { log: createLogger({ level: 'silent' }), now: () => T0, connected: () => true },
  );
  ingest.settle();
  ingest.handle('devices/cam-1/hello', Buffer.from(JSON.stringify(msg.hello('cam-1', ['127.0.0.1'], 9001))), { retain: true });
  return ingest;
}

const telemetry = (seq: number, atMs = seq) => Buffer.from(JSON.stringify({ ...msg.telemetry(), timestamp: new Date(T0 + atMs).toISOString(), seq }));

/** Applies the last of `payloads` the way the relay does: the newest, with how many before it and the first of them. */
function applyHeld(i: Ingest, payloads: Buffer[]): void {
  const newest = payloads[payloads.length - 1];
  const first = payloads.length > 1 ? payloads[0] : undefined;
  i.handle('devices/cam-1/telemetry', newest, { retain: false, collapsed: payloads.length - 1, collapsedFirst: first });
}

const count = (i: Ingest) => i.devices.get('cam-1')!.latest.get('telemetry')!.count;

describe('telemetry a replica held back, counted as the owner counts it', () => {
  it('the newest of three stands for three: the topic, the valid and the received counts', () => {
    const i = ingest();
    i.handle('devices/cam-1/telemetry', telemetry(1), { retain: false });
    const before = i.status();
    applyHeld(i, [telemetry(2), telemetry(3), telemetry(4)]);
    assert.equal(count(i), 4);
    assert.equal(i.devices.get('cam-1')!.latest.get('telemetry')!.message.seq, 4);
    assert.equal(i.status().valid - before.valid, 3);
    assert.equal(i.status().messages - before.messages, 3);
  });

  it('a first that is a copy of the telemetry the cache holds is not counted again; it is still a valid message received', () => {
    const i = ingest();
    i.handle('devices/cam-1/telemetry', telemetry(1), { retain: false });
    const before = i.status();
    applyHeld(i, [telemetry(1), telemetry(2), telemetry(3)]);
    assert.equal(count(i), 3, 'seq 1 once, 2 and 3');
    // What the owner does with the same three messages, one by one.
    const owner = ingest();
    for (const seq of [1, 1, 2, 3]) owner.handle('devices/cam-1/telemetry', telemetry(seq), { retain: false });
    assert.equal(count(owner), count(i));
    assert.equal(i.status().valid - before.valid, 3);
    assert.equal(owner.status().valid, i.status().valid);
  });

  it('a first with the same stamp as the held one but other content is another message, counted', () => {
    const i = ingest();
    i.handle('devices/cam-1/telemetry', telemetry(1, 5), { retain: false });
    applyHeld(i, [telemetry(2, 5), telemetry(3, 6)]);
    assert.equal(count(i), 3);
  });

  it('through the held messages, in the orders a session changing hands brings copies and late ones: the count the owner has', () => {
    // M0 applied (the cache shows it), then what follows is held, or applied at once where it is not newer than the held one.
    const orders: [string, number[]][] = [
      ['a copy of one held and replaced', [1, 1, 2]],
      ['a copy of the one the cache shows, then a newer one', [0, 1]],
      ['a copy of a replaced one after a newer one', [1, 2, 1]],
      ['a copy of the newest held', [1, 2, 2]],
      ['no copy', [1, 2, 3]],
      ['a copy of the shown one twice around a newer one', [0, 1, 0]],
    ];
    for (const [what, seqs] of orders) {
      const owner = ingest();
      const mirror = ingest();
      const held = new MirroredMessages();
      for (const i of [owner, mirror]) i.handle('devices/cam-1/telemetry', telemetry(0), { retain: false });
      for (const seq of seqs) {
        const m = { topic: 'devices/cam-1/telemetry', payload: telemetry(seq), retain: false, at: T0 + seq };
        owner.handle(m.topic, m.payload, { retain: false });
        if (!held.hold('cam-1', m, 0)) mirror.handle(m.topic, m.payload, { retain: false });
      }
      for (const h of held.take('cam-1') ?? []) mirror.handle(h.topic, h.payload, { retain: false, collapsed: h.collapsed, collapsedFirst: h.first });
      assert.equal(count(mirror), count(owner), what);
      assert.equal(mirror.devices.get('cam-1')!.latest.get('telemetry')!.message.seq, Math.max(...seqs), `${what}: the newest shown`);
    }
  });

  it('a first that is not JSON is no copy: counted with the held one, nothing thrown', () => {
    const i = ingest();
    i.handle('devices/cam-1/telemetry', telemetry(1), { retain: false });
    const stamp = new Date(T0 + 1).toISOString();
    applyHeld(i, [Buffer.from(`{"timestamp":"${stamp}","seq":"not a number"`), telemetry(2)]);
    assert.equal(count(i), 3);
  });
});
