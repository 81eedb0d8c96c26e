import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { MAX_DATAGRAM_BYTES, MESH_MAGIC, decodeDatagram, encodeDatagram, type MeshMessage } from '../../../../plugins/peer-mesh/src/datagram.js';
import { MeshVerifier } from '../../../../plugins/peer-mesh/src/mesh-verifier.js';
import { ReplayGuard } from '../../../../plugins/peer-mesh/src/replay-guard.js';

const KEY = Buffer.from('mesh-key-for-unit-tests-0123456789');
const OTHER_KEY = Buffer.from('another-fleet-mesh-key-9876543210');
const NOW = 1_800_000_000_000;
const WINDOW = 30_000;

const message = (over: Partial<MeshMessage> = {}): MeshMessage => ({
  t: 'hb',
  from: 'cam-2',
  to: 'cam-1',
  seq: 1,
  ts: NOW,
  boot: 'boot-a',
  mesh_port: 11555,
  sidecar_port: 8777,
  ...over,
});

/** A datagram signed correctly over arbitrary bytes (what a key holder with a broken encoder would send). */
const signedRaw = (json: string, key = KEY) => {
  const body = Buffer.from(json);
  return Buffer.concat([MESH_MAGIC, createHmac('sha256', key).update(body).digest(), body]);
};

test('a datagram is LKM1, the HMAC-SHA256 of its JSON, then the JSON; it decodes to the same message', () => {
  const m = message({ t: 'ack', echo: 7 });
  const d = encodeDatagram(m, KEY);
  assert.equal(d.subarray(0, 4).toString('latin1'), 'LKM1');
  const json = d.subarray(36);
  assert.deepEqual(d.subarray(4, 36), createHmac('sha256', KEY).update(json).digest());
  assert.deepEqual(JSON.parse(json.toString()), m);
  assert.deepEqual(decodeDatagram(d, KEY), { ok: true, message: m });
});

test('a wrong key or any altered byte is a bad signature, and its JSON is never parsed', () => {
  assert.deepEqual(decodeDatagram(encodeDatagram(message(), OTHER_KEY), KEY), { ok: false, reason: 'bad_signature' });
  const d = encodeDatagram(message(), KEY);
  for (const at of [4, 20, 35, 36, d.length - 1]) {
    const altered = Buffer.from(d);
    altered[at] ^= 0x01;
    assert.deepEqual(decodeDatagram(altered, KEY), { ok: false, reason: 'bad_signature' }, `byte ${at}`);
  }
  // Unsigned garbage after a valid header: refused at the MAC, not as malformed JSON.
  assert.deepEqual(decodeDatagram(Buffer.concat([MESH_MAGIC, Buffer.alloc(32), Buffer.from('{nope')]), KEY), { ok: false, reason: 'bad_signature' });
});

test('framing, JSON and fields that are wrong are malformed', () => {
  const cases: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['header only', Buffer.concat([MESH_MAGIC, Buffer.alloc(32)])],
    ['wrong magic', Buffer.concat([Buffer.from('LKM2'), encodeDatagram(message(), KEY).subarray(4)])],
    ['oversized', Buffer.concat([signedRaw('{}'), Buffer.alloc(MAX_DATAGRAM_BYTES)])],
    ['signed, not JSON', signedRaw('{"t":"hb",')],
    ['signed, JSON not an object', signedRaw('[1,2,3]')],
    ['signed, unknown type', signedRaw(JSON.stringify(message({ t: 'bye' as MeshMessage['t'] })))],
    ['signed, seq 0', signedRaw(JSON.stringify(message({ seq: 0 })))],
    ['signed, seq not an integer', signedRaw(JSON.stringify(message({ seq: 1.5 })))],
    ['signed, device id with a slash', signedRaw(JSON.stringify(message({ from: 'a/b' })))],
    ['signed, port out of range', signedRaw(JSON.stringify(message({ mesh_port: 70000 })))],
    ['signed, ack without echo', signedRaw(JSON.stringify(message({ t: 'ack' })))],
    ['signed, no receiver', signedRaw(JSON.stringify({ ...message(), to: undefined }))],
    ['signed, receiver with a slash', signedRaw(JSON.stringify(message({ to: 'a/b' })))],
  ];
  for (const [name, d] of cases) assert.deepEqual(decodeDatagram(d, KEY), { ok: false, reason: 'malformed' }, name);
});

test('a message that would not fit one datagram is refused when encoded', () => {
  assert.throws(() => encodeDatagram(message({ from: 'x'.repeat(1300) }), KEY), RangeError);
});

test('the verifier drops and counts each kind: wrong key, stale, replayed, malformed, from itself, for another device; accepts the rest', () => {
  const v = new MeshVerifier('cam-1', KEY, WINDOW, 8);
  assert.ok(v.verify(encodeDatagram(message({ seq: 5 }), KEY), NOW));
  assert.equal(v.verify(encodeDatagram(message({ seq: 6 }), OTHER_KEY), NOW), null);
  assert.equal(v.verify(encodeDatagram(message({ seq: 7, ts: NOW - WINDOW - 1 }), KEY), NOW), null);
  assert.equal(v.verify(encodeDatagram(message({ seq: 8, ts: NOW + WINDOW + 1 }), KEY), NOW), null);
  assert.equal(v.verify(encodeDatagram(message({ seq: 5 }), KEY), NOW), null, 'the same datagram again');
  assert.equal(v.verify(encodeDatagram(message({ seq: 4 }), KEY), NOW), null, 'an older sequence number');
  assert.equal(v.verify(signedRaw('not json'), NOW), null);
  assert.equal(v.verify(encodeDatagram(message({ from: 'cam-1', seq: 9 }), KEY), NOW), null);
  assert.equal(v.verify(encodeDatagram(message({ to: 'cam-3', seq: 10 }), KEY), NOW), null, 'signed for cam-3: a capture relayed to us');
  assert.ok(v.verify(encodeDatagram(message({ seq: 6, ts: NOW - WINDOW }), KEY), NOW), 'the window edge is inside');
  assert.deepEqual(v.counters, {
    sent: 0,
    accepted: 2,
    dropped_bad_signature: 1,
    dropped_stale: 2,
    dropped_replayed: 2,
    dropped_malformed: 1,
    dropped_unknown_sender: 1,
    dropped_misaddressed: 1,
    dropped_foreign_address: 0,
    dropped_rate_limited: 0,
    peers_refused: 0,
    peers_dropped_unheard: 0,
    hellos_refused_topic_mismatch: 0,
    hellos_refused_address: 0,
    send_errors: 0,
  });
});

test('a stale or refused datagram does not move the sequence: the next fresh one is still accepted', () => {
  const v = new MeshVerifier('cam-1', KEY, WINDOW, 8);
  assert.equal(v.verify(encodeDatagram(message({ seq: 50, ts: NOW - 10 * WINDOW }), KEY), NOW), null);
  assert.equal(v.verify(encodeDatagram(message({ seq: 60 }), OTHER_KEY), NOW), null);
  assert.equal(v.verify(encodeDatagram(message({ seq: 70, to: 'cam-3' }), KEY), NOW), null);
  assert.equal(
    v.verify(encodeDatagram(message({ seq: 80 }), KEY), NOW, () => false),
    null,
    'source not admitted',
  );
  assert.equal(v.counters.dropped_foreign_address, 1);
  assert.ok(v.verify(encodeDatagram(message({ seq: 2 }), KEY), NOW));
});

test('the sequence is per sender and per boot: a restarted peer begins at 1 again, its old boot stays closed to replays', () => {
  const g = new ReplayGuard(WINDOW, 8);
  assert.equal(g.admit({ from: 'cam-2', boot: 'b1', seq: 40, ts: NOW }, NOW), 'ok');
  assert.equal(g.admit({ from: 'cam-3', boot: 'b1', seq: 1, ts: NOW }, NOW), 'ok', 'another sender has its own sequence');
  assert.equal(g.admit({ from: 'cam-2', boot: 'b2', seq: 1, ts: NOW }, NOW), 'ok', 'new boot, sequence from 1');
  assert.equal(g.admit({ from: 'cam-2', boot: 'b2', seq: 2, ts: NOW }, NOW), 'ok');
  assert.equal(g.admit({ from: 'cam-2', boot: 'b1', seq: 40, ts: NOW }, NOW), 'replayed', 'a datagram of the previous boot, replayed');
  assert.equal(g.admit({ from: 'cam-2', boot: 'b1', seq: 41, ts: NOW }, NOW), 'ok', 'the previous boot still in order');
});

test('the replay state is bounded: senders beyond the cap forget the least recently heard', () => {
  const g = new ReplayGuard(WINDOW, 3);
  for (let i = 0; i < 100; i++) assert.equal(g.admit({ from: `cam-${i}`, boot: 'b', seq: 1, ts: NOW }, NOW), 'ok');
  assert.equal(g.size, 3);
  for (let boot = 0; boot < 20; boot++) g.admit({ from: 'cam-99', boot: `b${boot}`, seq: 1, ts: NOW }, NOW);
  assert.equal(g.admit({ from: 'cam-99', boot: 'b19', seq: 1, ts: NOW }, NOW), 'replayed');
});
