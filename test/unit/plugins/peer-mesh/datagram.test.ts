import assert from 'node:assert/strict';
import { createHmac, X509Certificate } from 'node:crypto';
import { after, before, test } from 'node:test';
import {
  INTRO_MAGIC,
  MAX_DATAGRAM_BYTES,
  SEALED_MAGIC,
  encodeIntroduction,
  encodeSealed,
  macMatches,
  parseMessage,
  readFrame,
  type MeshMessage,
} from '../../../../plugins/peer-mesh/src/datagram.js';
import type { MeshIdentity } from '../../../../plugins/peer-mesh/src/mesh-identity.js';
import { MeshVerifier, emptyCounters, type SenderKnowledge } from '../../../../plugins/peer-mesh/src/mesh-verifier.js';
import { ReplayGuard } from '../../../../plugins/peer-mesh/src/replay-guard.js';
import { meshFleet, type MeshFleet } from './mesh-fleet.js';

const KEY = Buffer.from('mesh-key-for-unit-tests-0123456789');
const OTHER_KEY = Buffer.from('another-fleet-mesh-key-9876543210');
const NOW = Date.now();
const WINDOW = 30_000;

let fleet: MeshFleet;
let cam1: MeshIdentity;
let cam2: MeshIdentity;
let cam9: MeshIdentity;
/** The key cam-1 and cam-2 share: derived at either end, by nobody else. */
let pair12: Buffer;
before(async () => {
  fleet = await meshFleet(['cam-1', 'cam-2', 'cam-9'], ['cam-2']);
  cam1 = fleet.identity('cam-1');
  cam2 = fleet.identity('cam-2');
  cam9 = fleet.identity('cam-9');
  pair12 = cam1.pairKey(KEY, 'cam-2', publicOf(cam2));
});
after(() => fleet?.close());

/** A device's public key, as its certificate shows it to anyone. */
const publicOf = (i: MeshIdentity) => new X509Certificate(i.certificate).publicKey;

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
const hello = (over: Partial<MeshMessage> = {}) => message({ t: 'hello', known: false, ...over });
const introduce = (m: MeshMessage, as: MeshIdentity, fleetKey = KEY) =>
  encodeIntroduction(m, { fleetKey, certificate: as.certificate, privateKey: as.privateKey });

/** cam-1's knowledge: cam-2 vouched for and sealed with; cam-9 vouched for, no key yet; everyone else unknown. */
const knows = (over: Partial<SenderKnowledge> = {}): SenderKnowledge => ({
  pairKey: (sender) => (sender === 'cam-2' ? pair12 : null),
  mayIntroduce: (sender) => (sender === 'cam-2' || sender === 'cam-9' ? 'ok' : 'unknown'),
  sourceAdmitted: () => true,
  ...over,
});

test('the pair key: both devices derive the same one alone; no third device, and no other fleet key, gives it', () => {
  assert.deepEqual(cam2.pairKey(KEY, 'cam-1', publicOf(cam1)), pair12);
  assert.equal(pair12.length, 32);
  assert.notDeepEqual(cam9.pairKey(KEY, 'cam-1', publicOf(cam1)), pair12, 'cam-9 with everything it holds');
  assert.notDeepEqual(cam9.pairKey(KEY, 'cam-2', publicOf(cam2)), pair12);
  assert.notDeepEqual(cam1.pairKey(OTHER_KEY, 'cam-2', publicOf(cam2)), pair12, 'the fleet key salts it');
});

test('a sealed datagram is LKM2, the sender id, the HMAC-SHA256 under the pair key, then the JSON', () => {
  const m = message({ t: 'ack', echo: 7 });
  const d = encodeSealed(m, pair12);
  assert.equal(d.subarray(0, 4).toString('latin1'), 'LKM2');
  assert.equal(d[4], 5);
  assert.equal(d.subarray(5, 10).toString(), 'cam-2');
  const json = d.subarray(42);
  assert.deepEqual(d.subarray(10, 42), createHmac('sha256', pair12).update(d.subarray(0, 10)).update(json).digest());
  const frame = readFrame(d)!;
  assert.equal(frame.kind, 'sealed');
  assert.equal(frame.sender, 'cam-2');
  assert.ok(macMatches(pair12, frame.signed, frame.mac));
  assert.deepEqual(parseMessage(frame.json, frame.sender, frame.kind), m);
});

test('an introduction carries the certificate, the device signature and the fleet MAC; any altered byte breaks one of them', () => {
  const d = introduce(hello(), cam2);
  assert.deepEqual(d.subarray(0, 4), INTRO_MAGIC);
  const frame = readFrame(d)!;
  assert.equal(frame.kind, 'intro');
  if (frame.kind !== 'intro') return;
  assert.deepEqual(frame.certificate, cam2.certificate);
  assert.ok(macMatches(KEY, frame.signed, frame.mac));
  assert.ok(d.length <= MAX_DATAGRAM_BYTES, `${d.length} bytes`);
  for (const at of [6, 12, 50, 120, d.length - 1]) {
    const altered = Buffer.from(d);
    altered[at] ^= 0x01;
    const f = readFrame(altered);
    assert.ok(!f || !macMatches(KEY, f.signed, f.mac), `byte ${at}`);
  }
});

test('framing is checked before anything: wrong magic, empty or long ids, truncated and oversized frames are refused unread', () => {
  const d = encodeSealed(message(), pair12);
  const cases: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['protocol 1', Buffer.concat([Buffer.from('LKM1'), d.subarray(4)])],
    ['id length 0', Buffer.concat([SEALED_MAGIC, Buffer.from([0]), Buffer.alloc(40)])],
    ['id longer than the datagram', Buffer.concat([SEALED_MAGIC, Buffer.from([200]), Buffer.alloc(40)])],
    ['no MAC', d.subarray(0, 20)],
    ['oversized', Buffer.concat([d, Buffer.alloc(MAX_DATAGRAM_BYTES)])],
    ['introduction without its certificate', introduce(hello(), cam2).subarray(0, 5 + 5 + 32 + 64 + 2)],
  ];
  for (const [name, b] of cases) assert.equal(readFrame(b), null, name);
});

test('JSON under a good MAC that is wrong, or names another sender than the header, or the wrong type for its frame, is malformed', () => {
  const parse = (json: string, kind: 'sealed' | 'intro' = 'sealed', sender = 'cam-2') => parseMessage(Buffer.from(json), sender, kind);
  assert.equal(parse('{"t":"hb",'), null);
  assert.equal(parse('[1,2,3]'), null);
  assert.equal(parse(JSON.stringify(message({ seq: 0 }))), null);
  assert.equal(parse(JSON.stringify(message({ t: 'ack' }))), null, 'an ack without echo');
  assert.equal(parse(JSON.stringify(message()), 'sealed', 'cam-9'), null, 'header says cam-9, JSON cam-2');
  assert.equal(parse(JSON.stringify(hello())), null, 'a hello is never sealed');
  assert.equal(parse(JSON.stringify(message()), 'intro'), null, 'an introduction is a hello');
  assert.equal(parse(JSON.stringify(message({ to: 'a/b' }))), null);
  assert.ok(parse(JSON.stringify(message())));
});

test('a message that would not fit one datagram is refused when encoded', () => {
  assert.throws(() => encodeSealed(message({ from: 'x'.repeat(1300) }), pair12), RangeError);
});

test('cam-1 drops and counts each kind; a sender nobody vouched for costs no HMAC at all', () => {
  const v = new MeshVerifier(cam1, KEY, WINDOW, 8);
  const k = knows();
  assert.equal(v.verify(encodeSealed(message({ seq: 5 }), pair12), NOW, k, '127.0.0.3')?.kind, 'sealed');
  for (let i = 0; i < 100; i++) {
    assert.equal(v.verify(encodeSealed(message({ from: `fake-${i}` }), KEY), NOW, k, '127.0.0.9'), null);
    assert.equal(v.verify(introduce(hello({ from: `fake-${i}` }), cam9), NOW, k, '127.0.0.9'), null);
  }
  assert.equal(v.counters.macs_computed, 1, 'two hundred datagrams from unknown senders: no MAC computed');
  assert.equal(v.counters.dropped_unknown_sender, 200);
  assert.equal(v.verify(encodeSealed(message({ seq: 6 }), KEY), NOW, k, '127.0.0.9'), null, 'sealed under the fleet key');
  assert.equal(v.verify(encodeSealed(message({ seq: 7, ts: NOW - WINDOW - 1 }), pair12), NOW, k, '127.0.0.3'), null, 'stale');
  assert.equal(v.verify(encodeSealed(message({ seq: 5 }), pair12), NOW, k, '127.0.0.3'), null, 'replayed');
  assert.equal(v.verify(encodeSealed(message({ from: 'cam-1', seq: 9 }), pair12), NOW, k, '127.0.0.3'), null, 'from ourselves');
  assert.equal(v.verify(encodeSealed(message({ to: 'cam-3', seq: 10 }), pair12), NOW, k, '127.0.0.3'), null, 'for cam-3');
  assert.equal(v.verify(encodeSealed(message({ seq: 11 }), pair12), NOW, knows({ sourceAdmitted: () => false }), '10.0.0.1'), null);
  assert.ok(v.verify(encodeSealed(message({ seq: 6, ts: NOW - WINDOW }), pair12), NOW, k, '127.0.0.3'), 'the window edge is inside');
  assert.deepEqual(v.counters, {
    ...emptyCounters(),
    accepted: 2,
    macs_computed: 7,
    dropped_bad_signature: 1,
    dropped_stale: 1,
    dropped_replayed: 1,
    dropped_unknown_sender: 201,
    dropped_misaddressed: 1,
    dropped_foreign_address: 1,
  });
});

test('cam-9, holding valid credentials of its own, cannot speak as cam-2: every way it can sign is refused', () => {
  const v = new MeshVerifier(cam1, KEY, WINDOW, 8);
  const k = knows();
  const as2 = hello({ from: 'cam-2', seq: 1 });
  // Its own certificate under cam-2's id: the CN says cam-9.
  assert.equal(v.verify(introduce(as2, cam9), NOW, k, '127.0.0.9'), null);
  assert.equal(v.counters.dropped_bad_certificate, 1);
  // cam-2's certificate (public: any peer has seen it), signed with cam-9's key.
  const stolen = introduce(as2, { ...cam9, certificate: cam2.certificate, deviceId: 'cam-9' } as MeshIdentity);
  assert.equal(v.verify(stolen, NOW, k, '127.0.0.9'), null);
  assert.equal(v.counters.dropped_bad_signature, 1);
  // A certificate of another CA naming cam-2, with its own key.
  assert.equal(v.verify(introduce(as2, fleet.foreign('cam-2')), NOW, k, '127.0.0.9'), null);
  assert.equal(v.counters.dropped_bad_certificate, 2);
  // Heartbeats "from cam-2" sealed under the keys cam-9 can make: the fleet key, its own pair key with cam-1.
  assert.equal(v.verify(encodeSealed(message({ seq: 2 }), KEY), NOW, k, '127.0.0.9'), null);
  assert.equal(v.verify(encodeSealed(message({ seq: 3 }), cam9.pairKey(KEY, 'cam-1', publicOf(cam1))), NOW, k, '127.0.0.9'), null);
  assert.equal(v.counters.dropped_bad_signature, 3);
  assert.equal(v.counters.accepted, 0);
  // cam-2 itself is believed, and cam-9 as itself.
  assert.equal(v.verify(introduce(as2, cam2), NOW, k, '127.0.0.3')?.kind, 'intro');
  const own = v.verify(introduce(hello({ from: 'cam-9', seq: 1 }), cam9), NOW, k, '127.0.0.9');
  assert.equal(own?.kind === 'intro' && own.certificate.commonName, 'cam-9');
  assert.equal(v.counters.certificates_checked, 3, 'three certificates, each checked once, then cached');
});

test('an introduction under another fleet key, or past its budget, is refused before its signature is checked', () => {
  const v = new MeshVerifier(cam1, KEY, WINDOW, 8);
  assert.equal(v.verify(introduce(hello(), cam2, OTHER_KEY), NOW, knows(), '127.0.0.3'), null);
  assert.equal(v.verify(introduce(hello({ seq: 2 }), cam2), NOW, knows({ mayIntroduce: () => 'over_budget' }), '127.0.0.3'), null);
  assert.equal(v.counters.dropped_bad_signature, 1);
  assert.equal(v.counters.dropped_rate_limited, 1);
  assert.equal(v.counters.signatures_verified, 0);
  assert.equal(v.counters.macs_computed, 1);
});

test('a stale or refused datagram does not move the sequence: the next fresh one is still accepted', () => {
  const v = new MeshVerifier(cam1, KEY, WINDOW, 8);
  const k = knows();
  assert.equal(v.verify(encodeSealed(message({ seq: 50, ts: NOW - 10 * WINDOW }), pair12), NOW, k, '127.0.0.3'), null);
  assert.equal(v.verify(encodeSealed(message({ seq: 60 }), KEY), NOW, k, '127.0.0.3'), null);
  assert.equal(v.verify(encodeSealed(message({ seq: 70, to: 'cam-3' }), pair12), NOW, k, '127.0.0.3'), null);
  assert.equal(v.verify(encodeSealed(message({ seq: 80 }), pair12), NOW, knows({ sourceAdmitted: () => false }), '10.0.0.1'), null);
  assert.equal(v.verify(introduce(hello({ seq: 90, from: 'cam-2' }), cam9), NOW, k, '127.0.0.9'), null, 'a forged introduction');
  assert.equal(v.counters.dropped_foreign_address, 1);
  assert.ok(v.verify(encodeSealed(message({ seq: 2 }), pair12), NOW, k, '127.0.0.3'));
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
