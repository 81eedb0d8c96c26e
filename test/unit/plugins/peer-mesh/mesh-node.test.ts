import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, test } from 'node:test';
import { createLogger } from '../../../../core/src/log/logger.js';
import { encodeIntroduction, encodeSealed, readFrame, type MeshMessage } from '../../../../plugins/peer-mesh/src/datagram.js';
import type { MeshIdentity } from '../../../../plugins/peer-mesh/src/mesh-identity.js';
import { MeshNetworks } from '../../../../plugins/peer-mesh/src/mesh-networks.js';
import { MeshNode } from '../../../../plugins/peer-mesh/src/mesh-node.js';
import { waitFor } from '../../../support/hub-helpers.js';
import { meshFleet, type MeshFleet } from './mesh-fleet.js';

const KEY = Buffer.from('mesh-key-for-unit-tests-0123456789');
const log = createLogger({ level: 'silent' });
const HEARTBEAT_MS = 100;
const DOWN_MS = 600;
const DROP_MS = 3000;

/**
 * Clocks the test moves by hand, so nothing depends on how fast the machine is: the wall clock
 * (datagram timestamps, the replay window) and the monotonic one (states, rate windows, greetings,
 * round trips). `advance` moves both, as time passing does; a test moving `clock.wall` alone is an NTP step.
 */
const clock = { wall: Date.now(), mono: 1_000_000 };
const advance = (ms: number) => {
  clock.wall += ms;
  clock.mono += ms;
};

let fleet: MeshFleet;
before(async () => {
  fleet = await meshFleet(['cam-a', 'cam-b', 'cam-c', 'cam-f', 'cam-z', 'cam-9']);
});
after(() => fleet?.close());

function node(deviceId: string, o: { key?: Buffer; maxRate?: number; networks?: string[]; host?: string } = {}): MeshNode {
  return new MeshNode({
    deviceId,
    host: o.host ?? '127.0.0.1',
    port: 0,
    key: o.key ?? KEY,
    identity: fleet.identity(deviceId),
    timings: { heartbeatMs: HEARTBEAT_MS, suspectMs: 300, downMs: DOWN_MS, dropMs: DROP_MS, windowMs: 30_000 },
    maxPeers: 8,
    maxRatePerSender: o.maxRate ?? 1000,
    networks: new MeshNetworks(o.networks ?? ['127.0.0.0/8']),
    sidecarPort: () => 8777,
    now: () => clock.wall,
    monotonic: () => clock.mono,
    log,
  });
}

/** Whether `n` has heard `id` (false while it is not in the table at all). */
const heard = (n: MeshNode, id: string) => (n.table.get(id)?.lastSeenAt ?? null) !== null;

const publicOf = (i: MeshIdentity) => new X509Certificate(i.certificate).publicKey;

/** A heartbeat as its sender would seal it. */
const hb = (over: Partial<MeshMessage> = {}): MeshMessage => ({
  t: 'hb',
  from: 'cam-f',
  to: 'cam-b',
  seq: 1,
  ts: clock.wall,
  boot: 'b',
  mesh_port: 1,
  sidecar_port: null,
  ...over,
});
const introduce = (m: MeshMessage, as: MeshIdentity, fleetKey = KEY) =>
  encodeIntroduction({ ...m, t: 'hello', known: false }, { fleetKey, certificate: as.certificate, privateKey: as.privateKey });
/** The key `a` and `b` share (either computes it). */
const pairKey = (a: string, b: string) => fleet.identity(a).pairKey(KEY, b, publicOf(fleet.identity(b)));

async function rawSocket(t: { after(fn: () => void): void }, host = '127.0.0.1'): Promise<Socket> {
  const raw = createSocket('udp4');
  t.after(() => raw.close());
  await new Promise<void>((resolve) => raw.bind(0, host, resolve));
  return raw;
}

/**
 * Sends datagrams from `raw` in batches of 20, each waited for until `seen` (a count on the receiver) has
 * caught up: a UDP receive buffer that overflows loses datagrams silently, and the test counts them.
 */
async function sendPaced(raw: Socket, datagrams: Buffer[], port: number, seen: () => number): Promise<void> {
  const start = seen();
  for (let i = 0; i < datagrams.length; i += 20) {
    const batch = datagrams.slice(i, i + 20);
    await Promise.all(batch.map((d) => new Promise<void>((resolve, reject) => raw.send(d, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())))));
    await waitFor(`${i + batch.length} datagrams seen`, () => seen() - start >= i + batch.length, 10_000, 5);
  }
}

/** Two started nodes that vouch for each other as the bus would (each has the other's hello). */
async function pair(t: { after(fn: () => Promise<unknown>): void }, a = node('cam-a'), b = node('cam-b')) {
  t.after(() => Promise.all([a.close(), b.close()]));
  const [aPort, bPort] = [await a.start(), await b.start()];
  b.addPeer({ deviceId: 'cam-a', address: '127.0.0.1', meshPort: aPort, source: 'hello' });
  a.addPeer({ deviceId: 'cam-b', address: '127.0.0.1', meshPort: bPort, source: 'config' });
  return { a, b };
}

test('two vouched nodes introduce themselves, derive the same pair key, and heartbeats sealed under it measure the round trip', async (t) => {
  const { a, b } = await pair(t);
  await waitFor('both to hold the pair key', () => Boolean(a.table.get('cam-b')?.pairKey && b.table.get('cam-a')?.pairKey));
  assert.deepEqual(a.table.get('cam-b')!.pairKey, b.table.get('cam-a')!.pairKey);
  assert.deepEqual(a.table.get('cam-b')!.pairKey, pairKey('cam-a', 'cam-b'));
  assert.equal(b.table.get('cam-a')!.sidecarPort, 8777);
  a.tick();
  const rtt = await waitFor('a round trip', () => a.table.get('cam-b')!.rttMs ?? undefined);
  assert.ok(rtt >= 0);
  assert.equal(a.table.stateOf(a.table.get('cam-b')!), 'up');
  assert.equal(b.table.stateOf(b.table.get('cam-a')!), 'up');
  advance(400);
  assert.equal(a.table.stateOf(a.table.get('cam-b')!), 'suspect');
  a.tick();
  b.tick();
  await waitFor('b heard again', () => a.table.stateOf(a.table.get('cam-b')!) === 'up');
  for (const n of [a, b]) {
    const c = n.counters;
    assert.equal(
      c.dropped_bad_signature + c.dropped_bad_certificate + c.dropped_malformed + c.dropped_replayed + c.dropped_stale + c.dropped_unknown_sender,
      0,
    );
    assert.ok(c.signatures_verified <= 2, 'one introduction each way, then only HMACs');
  }
});

test('a device whose hello was missed is taken from its introduction: its fleet certificate vouches for its id', async (t) => {
  const a = node('cam-a');
  const b = node('cam-b');
  t.after(() => Promise.all([a.close(), b.close()]));
  const bPort = await b.start();
  await a.start();
  // b never saw a's hello (hellos are not retained: b started after it went out).
  a.addPeer({ deviceId: 'cam-b', address: '127.0.0.1', meshPort: bPort, source: 'config' });
  await waitFor('b and a to meet', () => heard(b, 'cam-a') && heard(a, 'cam-b'));
  assert.equal(b.table.get('cam-a')!.source, 'hello');
  assert.equal(b.table.get('cam-a')!.meshPort, a.port);
});

test('signed hellos from 100 fake ids (under the fleet key, with a valid certificate of the fleet) never enter the table', async (t) => {
  const b = node('cam-b');
  t.after(() => b.close());
  const bPort = await b.start();
  const raw = await rawSocket(t, '127.0.0.9');
  const forged = Array.from({ length: 100 }, (_, i) => [
    introduce(hb({ from: `fake-${i}`, seq: i + 1 }), fleet.identity('cam-9')),
    encodeSealed(hb({ from: `fake-${i}`, seq: i + 1 }), KEY),
  ]).flat();
  const c = b.counters;
  await sendPaced(raw, forged, bPort, () => c.dropped_unknown_sender + c.dropped_bad_certificate + c.dropped_rate_limited);
  assert.equal(b.table.size, 0);
  // Sealed ones from ids it shares no key with: refused unread, no MAC.
  assert.equal(c.dropped_unknown_sender, 100);
  // Introductions from strangers: two a heartbeat from one address get as far as the certificate (which names cam-9), the rest are dropped unread.
  assert.equal(c.dropped_bad_certificate, 2);
  assert.equal(c.dropped_rate_limited, 98);
  assert.equal(c.macs_computed, 2);
  assert.equal(c.signatures_verified, 0);
});

test('cam-9, with valid credentials of its own, cannot move cam-a’s record of cam-b: nothing it can sign passes as cam-b', async (t) => {
  const { a } = await pair(t);
  await waitFor('a to hear b', () => heard(a, 'cam-b'));
  const where = () => `${a.table.get('cam-b')!.address}:${a.table.get('cam-b')!.meshPort}`;
  const before = where();
  const raw = await rawSocket(t, '127.0.0.9');
  advance(HEARTBEAT_MS); // a new heartbeat: introductions are bounded per heartbeat
  const cam9 = fleet.identity('cam-9');
  const asB = (seq: number) => hb({ from: 'cam-b', to: 'cam-a', seq, boot: 'forged' });
  const refused = () => a.counters.dropped_bad_signature + a.counters.dropped_bad_certificate;
  await sendPaced(
    raw,
    [
      encodeSealed(asB(1), KEY), // the fleet key
      encodeSealed(asB(2), cam9.pairKey(KEY, 'cam-a', publicOf(fleet.identity('cam-a')))), // its own pair key with cam-a
      introduce(asB(3), cam9), // its certificate, cam-b's name
      introduce(asB(4), { ...cam9, certificate: fleet.identity('cam-b').certificate } as MeshIdentity), // cam-b's certificate, its own key
    ],
    a.port!,
    refused,
  );
  assert.equal(refused(), 4);
  assert.equal(a.counters.dropped_bad_certificate, 1);
  assert.equal(where(), before, 'cam-b not moved');
});

test('a restarted peer (new boot, same certificate) is accepted from sequence 1 again, and never counted as replayed', async (t) => {
  const b = node('cam-b');
  t.after(() => b.close());
  const bPort = await b.start();
  const first = node('cam-a');
  const aPort = await first.start();
  b.addPeer({ deviceId: 'cam-a', address: '127.0.0.1', meshPort: aPort, source: 'hello' });
  first.addPeer({ deviceId: 'cam-b', address: '127.0.0.1', meshPort: bPort, source: 'config' });
  await waitFor('the first boot introduced', () => Boolean(first.table.get('cam-b')?.pairKey));
  for (let i = 0; i < 5; i++) first.tick();
  await waitFor('b to accept the first boot', () => b.counters.accepted >= 6);
  await first.close();
  advance(HEARTBEAT_MS); // introductions are bounded per heartbeat: the restart comes a heartbeat later
  const second = node('cam-a');
  t.after(() => second.close());
  await second.start();
  assert.notEqual(second.boot, first.boot);
  second.addPeer({ deviceId: 'cam-b', address: '127.0.0.1', meshPort: bPort, source: 'config' });
  await waitFor('b to hear the new boot', () => b.table.get('cam-a')!.meshPort === second.port);
  assert.equal(b.counters.dropped_replayed, 0);
});

test('a wrong fleet key never joins: its introductions are counted as bad signatures and it stays silent-side', async (t) => {
  const b = node('cam-b');
  const rogue = node('cam-a', { key: Buffer.from('not-the-fleet-mesh-key-000000000') });
  t.after(() => Promise.all([b.close(), rogue.close()]));
  const [bPort, rPort] = [await b.start(), await rogue.start()];
  b.addPeer({ deviceId: 'cam-a', address: '127.0.0.1', meshPort: rPort, source: 'hello' });
  rogue.addPeer({ deviceId: 'cam-b', address: '127.0.0.1', meshPort: bPort, source: 'config' });
  advance(HEARTBEAT_MS);
  rogue.tick();
  await waitFor('b to count its introductions as bad', () => b.counters.dropped_bad_signature >= 2);
  assert.equal(b.table.get('cam-a')!.lastSeenAt, null);
  assert.equal(b.table.get('cam-a')!.pairKey, null);
});

test('2 000 source ports of one address are one sender: past the rate they are dropped before any HMAC', async (t) => {
  const b = node('cam-b', { maxRate: 20 });
  t.after(() => b.close());
  const bPort = await b.start();
  b.addPeer({ deviceId: 'cam-f', address: '127.0.0.3', meshPort: 11555, source: 'config' });
  // The worst case for the receiver: a sender it shares a key with, so every datagram let through costs an HMAC.
  b.table.get('cam-f')!.pairKey = pairKey('cam-b', 'cam-f');
  const sockets: Socket[] = [];
  t.after(() => sockets.forEach((s) => s.close()));
  for (let i = 0; i < 2000; i++) sockets.push(await rawSocket({ after: () => undefined }, '127.0.0.9'));
  const seen = () => b.counters.macs_computed + b.counters.dropped_rate_limited;
  const junk = encodeSealed(hb({ from: 'cam-f', seq: 1 }), Buffer.alloc(32, 1));
  // In batches the receiver keeps up with (a UDP buffer overflowing would lose some, not count them), all inside one rate window (the monotonic clock stands still).
  for (let i = 0; i < 2000; i += 20) {
    await Promise.all(
      sockets.slice(i, i + 20).map((s) => new Promise<void>((resolve, reject) => s.send(junk, bPort, '127.0.0.1', (err) => (err ? reject(err) : resolve())))),
    );
    await waitFor(`${i + 20} datagrams seen`, () => seen() >= i + 20, 10_000, 5);
  }
  assert.equal(b.counters.macs_computed, 20, 'one sender’s rate of HMACs, not 2 000');
  assert.equal(b.counters.dropped_rate_limited, 1980);
});

test('a vouched peer silent past the drop time leaves the table; it comes back when it introduces itself again', async (t) => {
  const { a, b } = await pair(t);
  await waitFor('a to hear b', () => heard(a, 'cam-b') && heard(b, 'cam-a'));
  advance(DROP_MS);
  b.tick();
  assert.equal(b.table.get('cam-a'), undefined, 'dropped');
  assert.equal(b.counters.peers_dropped_silent, 1);
  // a finds b down and introduces itself again: b still holds its vouching (its hello), so it comes back.
  a.tick();
  await waitFor('b to take a back', () => heard(b, 'cam-a'));
  assert.equal(b.table.stateOf(b.table.get('cam-a')!), 'up');
});

test('every datagram a node sends names the peer it is for', async (t) => {
  const a = node('cam-a');
  t.after(() => a.close());
  await a.start();
  const raw = await rawSocket(t);
  const got: Buffer[] = [];
  raw.on('message', (m) => got.push(m));
  a.addPeer({ deviceId: 'cam-z', address: '127.0.0.1', meshPort: raw.address().port, source: 'config' });
  a.receive(introduce(hb({ from: 'cam-z', to: 'cam-a' }), fleet.identity('cam-z')), { address: '127.0.0.1', port: raw.address().port });
  a.receive(encodeSealed(hb({ from: 'cam-z', to: 'cam-a', seq: 2 }), pairKey('cam-a', 'cam-z')), { address: '127.0.0.1', port: raw.address().port });
  await waitFor('a greeting, an introduction back and an ack', () => got.length === 3);
  for (const d of got) assert.equal((JSON.parse(readFrame(d)!.json.toString()) as MeshMessage).to, 'cam-z');
});

test('a signed datagram from outside the mesh networks neither adds nor moves a peer; a configured peer beyond them is heard where the operator put it', () => {
  // Not started: nothing leaves this process (the addresses here are outside 127/8).
  const b = node('cam-b');
  b.addPeer({ deviceId: 'cam-c', address: '10.0.0.4', meshPort: 11555, source: 'config' });
  b.addPeer({ deviceId: 'cam-f', address: '127.0.0.8', meshPort: 11555, source: 'hello' });
  b.receive(introduce(hb({ from: 'cam-f' }), fleet.identity('cam-f')), { address: '10.1.2.3', port: 4000 });
  assert.equal(b.counters.dropped_foreign_address, 1);
  assert.equal(b.table.get('cam-f')!.address, '127.0.0.8');
  b.receive(introduce(hb({ from: 'cam-c', seq: 1 }), fleet.identity('cam-c')), { address: '10.0.0.4', port: 11555 });
  assert.equal(b.counters.accepted, 1);
  assert.notEqual(b.table.get('cam-c')!.lastSeenAt, null);
  b.receive(encodeSealed(hb({ from: 'cam-c', seq: 2 }), pairKey('cam-b', 'cam-c')), { address: '10.6.6.6', port: 11555 });
  assert.equal(b.counters.dropped_foreign_address, 2);
  assert.equal(b.table.get('cam-c')!.address, '10.0.0.4', 'not moved');
});

test('a hello-learned peer is greeted at most once per heartbeat however its hello flaps, and dropped when never heard within the down time', async (t) => {
  const a = node('cam-a');
  t.after(() => a.close());
  await a.start();
  // Read through a function: an assertion on the value would narrow its type for the rest of the test.
  const sent = () => a.counters.sent;
  const announce = (port: number) => a.addPeer({ deviceId: 'cam-z', address: '127.0.0.1', meshPort: port, source: 'hello' });
  announce(9);
  assert.equal(sent(), 1, 'a new peer is greeted at once');
  for (let i = 0; i < 50; i++) announce(10 + (i % 2));
  assert.equal(sent(), 1, 'fifty moves within the heartbeat: no more greetings');
  advance(HEARTBEAT_MS);
  announce(9);
  assert.equal(sent(), 2, 'a heartbeat later, one more');
  a.tick();
  assert.equal(sent(), 3, 'the heartbeat');
  announce(10);
  assert.equal(sent(), 3, 'the heartbeat just went: the move waits for the next');
  a.addPeer({ deviceId: 'cam-c', address: '127.0.0.1', meshPort: 12, source: 'config' });
  const before = sent();
  advance(DOWN_MS);
  a.tick();
  assert.equal(a.counters.peers_dropped_unheard, 1);
  assert.equal(a.table.get('cam-z'), undefined, 'never heard: gone');
  assert.ok(a.table.get('cam-c'), 'a configured peer stays, heard or not');
  assert.equal(sent(), before + 1, 'only the configured peer gets a greeting');
});

test('a wall-clock step back does not keep a sender rate-limited nor a silent peer up', () => {
  const b = node('cam-b', { maxRate: 5 });
  b.addPeer({ deviceId: 'cam-f', address: '127.0.0.7', meshPort: 4000, source: 'hello' });
  const key = pairKey('cam-b', 'cam-f');
  const from = { address: '127.0.0.7', port: 4000 };
  b.receive(introduce(hb({ seq: 1 }), fleet.identity('cam-f')), from);
  for (let seq = 2; seq <= 6; seq++) b.receive(encodeSealed(hb({ seq }), key), { ...from, port: 4000 + seq });
  assert.equal(b.counters.dropped_rate_limited, 1, 'five a second from one address, whatever the port');
  const peer = b.table.get('cam-f')!;
  assert.equal(b.table.stateOf(peer), 'up');
  clock.wall -= 3_600_000;
  advance(DOWN_MS + 1000);
  assert.equal(b.table.stateOf(peer), 'down', 'silent past the down time on the monotonic clock');
  b.receive(encodeSealed(hb({ seq: 7, ts: clock.wall }), key), from);
  assert.equal(b.counters.dropped_rate_limited, 1, 'a new rate window has begun');
  assert.equal(b.counters.accepted, 6);
  assert.equal(b.table.stateOf(peer), 'up');
});
