import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { createLogger } from '../../../../core/src/log/logger.js';
import { encodeDatagram, type MeshMessage } from '../../../../plugins/peer-mesh/src/datagram.js';
import { MeshNetworks } from '../../../../plugins/peer-mesh/src/mesh-networks.js';
import { MeshNode } from '../../../../plugins/peer-mesh/src/mesh-node.js';
import { waitFor } from '../../../integration/hub-helpers.js';

const KEY = Buffer.from('mesh-key-for-unit-tests-0123456789');
const log = createLogger({ level: 'silent' });
const HEARTBEAT_MS = 100;
const DOWN_MS = 600;

/**
 * Clocks the test moves by hand, so nothing depends on how fast the machine is: the wall clock
 * (datagram timestamps, the replay window) and the monotonic one (states, rate windows, greetings,
 * round trips). `advance` moves both, as time passing does; a test moving `clock.wall` alone is an NTP step.
 */
const clock = { wall: 1_800_000_000_000, mono: 1_000_000 };
const advance = (ms: number) => {
  clock.wall += ms;
  clock.mono += ms;
};

function node(deviceId: string, o: { key?: Buffer; maxRate?: number; networks?: string[] } = {}): MeshNode {
  return new MeshNode({
    deviceId,
    host: '127.0.0.1',
    port: 0,
    key: o.key ?? KEY,
    timings: { heartbeatMs: HEARTBEAT_MS, suspectMs: 300, downMs: DOWN_MS, windowMs: 30_000 },
    maxPeers: 8,
    maxRatePerSender: o.maxRate ?? 1000,
    networks: new MeshNetworks(o.networks ?? ['127.0.0.0/8']),
    sidecarPort: () => 8777,
    now: () => clock.wall,
    monotonic: () => clock.mono,
    log,
  });
}

/** A heartbeat as a key holder would sign it. */
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

test('two nodes: one knows the other from config, the other learns it from its signed hello; heartbeats measure the round trip', async (t) => {
  const a = node('cam-a');
  const b = node('cam-b');
  t.after(() => Promise.all([a.close(), b.close()]));
  await a.start();
  const bPort = await b.start();
  a.addPeer({ deviceId: 'cam-b', address: '127.0.0.1', meshPort: bPort, source: 'config' });
  await waitFor('b to learn a from its hello', () => b.table.get('cam-a'));
  await waitFor('a to hear b', () => a.table.get('cam-b')?.lastSeenAt !== null);
  assert.equal(b.table.get('cam-a')!.source, 'hello');
  assert.equal(b.table.get('cam-a')!.meshPort, a.port);
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
    assert.equal(c.dropped_bad_signature + c.dropped_malformed + c.dropped_replayed + c.dropped_stale + c.dropped_unknown_sender, 0);
  }
});

test('a restarted peer (new boot) is accepted from sequence 1 again, and never counted as replayed', async (t) => {
  const b = node('cam-b');
  t.after(() => b.close());
  const bPort = await b.start();
  const first = node('cam-a');
  await first.start();
  first.addPeer({ deviceId: 'cam-b', address: '127.0.0.1', meshPort: bPort, source: 'config' });
  for (let i = 0; i < 5; i++) first.tick();
  await waitFor('b to accept the first boot', () => b.counters.accepted >= 6);
  await first.close();
  const second = node('cam-a');
  t.after(() => second.close());
  await second.start();
  assert.notEqual(second.boot, first.boot);
  second.addPeer({ deviceId: 'cam-b', address: '127.0.0.1', meshPort: bPort, source: 'config' });
  const before = b.counters.accepted;
  // Its datagrams move the peer to its new port: b heard the new boot, whose sequence began at 1 again.
  await waitFor('b to hear the new boot', () => b.table.get('cam-a')!.meshPort === second.port);
  assert.ok(b.counters.accepted > before);
  assert.equal(b.counters.dropped_replayed, 0);
});

test('a wrong key never joins: its datagrams are counted as bad signatures and it stays out of the table', async (t) => {
  const b = node('cam-b');
  const rogue = node('cam-x', { key: Buffer.from('not-the-fleet-mesh-key-000000000') });
  t.after(() => Promise.all([b.close(), rogue.close()]));
  const bPort = await b.start();
  await rogue.start();
  rogue.addPeer({ deviceId: 'cam-b', address: '127.0.0.1', meshPort: bPort, source: 'config' });
  rogue.tick();
  rogue.tick();
  await waitFor('three bad signatures', () => b.counters.dropped_bad_signature === 3);
  assert.equal(b.table.size, 0);
  assert.equal(b.counters.sent, 0, 'nothing answered');
});

test('a flood from one sender is dropped unread past the rate, and what is kept stays bounded', async (t) => {
  const b = node('cam-b', { maxRate: 20 });
  t.after(() => b.close());
  const bPort = await b.start();
  const raw = createSocket('udp4');
  t.after(() => raw.close());
  const datagram = encodeDatagram(hb(), KEY);
  for (let i = 0; i < 200; i++) raw.send(datagram, bPort, '127.0.0.1');
  await waitFor('200 datagrams seen', () => b.counters.accepted + b.counters.dropped_replayed + b.counters.dropped_rate_limited === 200);
  assert.equal(b.counters.accepted, 1);
  assert.equal(b.counters.dropped_replayed, 19);
  assert.equal(b.counters.dropped_rate_limited, 180);
  // Spoofed senders cost a bounded map, never a table entry: only signed datagrams add peers.
  for (let i = 0; i < 3000; i++) b.receive(Buffer.from('junk'), { address: `10.${(i >> 8) & 255}.${i & 255}.1`, port: 9 });
  assert.equal(b.counters.dropped_malformed, 3000);
  assert.equal(b.table.size, 1);
});

test('a datagram claiming to be from this device is dropped and counted', async (t) => {
  const b = node('cam-b');
  t.after(() => b.close());
  await b.start();
  b.receive(encodeDatagram(hb({ from: 'cam-b', boot: 'x' }), KEY), {
    address: '127.0.0.1',
    port: 1,
  });
  assert.equal(b.counters.dropped_unknown_sender, 1);
  assert.equal(b.table.size, 0);
});

test('a datagram signed for another device is dropped and counted, and does not use up its sequence number', () => {
  const b = node('cam-b');
  const from = { address: '127.0.0.7', port: 4000 };
  b.receive(encodeDatagram(hb({ to: 'cam-c', seq: 5 }), KEY), from);
  assert.equal(b.counters.dropped_misaddressed, 1);
  assert.equal(b.counters.accepted, 0);
  assert.equal(b.table.size, 0, 'a relayed capture neither adds nor moves a peer');
  b.receive(encodeDatagram(hb({ to: 'cam-b', seq: 5 }), KEY), from);
  assert.equal(b.counters.accepted, 1, 'the same sequence number, addressed to us, is taken');
  assert.equal(b.table.get('cam-f')?.address, '127.0.0.7');
});

test('every datagram a node sends names the peer it is for', async (t) => {
  const a = node('cam-a');
  t.after(() => a.close());
  await a.start();
  const raw = createSocket('udp4');
  t.after(() => raw.close());
  const got: Buffer[] = [];
  raw.on('message', (m) => got.push(m));
  await new Promise<void>((resolve) => raw.bind(0, '127.0.0.1', resolve));
  a.addPeer({ deviceId: 'cam-z', address: '127.0.0.1', meshPort: raw.address().port, source: 'config' });
  a.receive(encodeDatagram(hb({ from: 'cam-z', to: 'cam-a' }), KEY), { address: '127.0.0.1', port: raw.address().port });
  await waitFor('a hello and an ack', () => got.length === 2);
  for (const d of got) assert.equal((JSON.parse(d.subarray(36).toString()) as MeshMessage).to, 'cam-z');
});

test('a signed datagram from outside the mesh networks neither adds nor moves a peer; a configured peer beyond them is heard where the operator put it', () => {
  // Not started: nothing leaves this process (the addresses here are outside 127/8).
  const b = node('cam-b');
  b.receive(encodeDatagram(hb({ from: 'cam-x' }), KEY), { address: '10.1.2.3', port: 4000 });
  assert.equal(b.counters.dropped_foreign_address, 1);
  assert.equal(b.table.size, 0);
  b.addPeer({ deviceId: 'cam-c', address: '10.0.0.4', meshPort: 11555, source: 'config' });
  b.receive(encodeDatagram(hb({ from: 'cam-c', seq: 1 }), KEY), { address: '10.0.0.4', port: 11555 });
  assert.equal(b.counters.accepted, 1);
  assert.notEqual(b.table.get('cam-c')!.lastSeenAt, null);
  b.receive(encodeDatagram(hb({ from: 'cam-c', seq: 2 }), KEY), { address: '10.6.6.6', port: 11555 });
  assert.equal(b.counters.dropped_foreign_address, 2);
  assert.equal(b.table.get('cam-c')!.address, '10.0.0.4', 'not moved');
});

test('a hello-learned peer is greeted at most once per heartbeat however its hello flaps, and dropped when never heard within the down time', async (t) => {
  const a = node('cam-a');
  t.after(() => a.close());
  await a.start();
  // Read through a function: an assertion on the value would narrow its type for the rest of the test.
  const sent = () => a.counters.sent;
  const announce = (port: number) => a.addPeer({ deviceId: 'cam-g', address: '127.0.0.1', meshPort: port, source: 'hello' });
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
  a.addPeer({ deviceId: 'cam-conf', address: '127.0.0.1', meshPort: 12, source: 'config' });
  const before = sent();
  advance(DOWN_MS);
  a.tick();
  assert.equal(a.counters.peers_dropped_unheard, 1);
  assert.equal(a.table.get('cam-g'), undefined, 'never heard: gone');
  assert.ok(a.table.get('cam-conf'), 'a configured peer stays, heard or not');
  assert.equal(sent(), before + 1, 'only the configured peer gets a heartbeat');
});

test('a wall-clock step back does not keep a sender rate-limited nor a silent peer up', () => {
  const b = node('cam-b', { maxRate: 5 });
  const from = { address: '127.0.0.7', port: 4000 };
  for (let seq = 1; seq <= 6; seq++) b.receive(encodeDatagram(hb({ seq }), KEY), from);
  assert.equal(b.counters.dropped_rate_limited, 1);
  const peer = b.table.get('cam-f')!;
  assert.equal(b.table.stateOf(peer), 'up');
  clock.wall -= 3_600_000;
  advance(DOWN_MS + 1000);
  assert.equal(b.table.stateOf(peer), 'down', 'silent past the down time on the monotonic clock');
  b.receive(encodeDatagram(hb({ seq: 7 }), KEY), from);
  assert.equal(b.counters.dropped_rate_limited, 1, 'a new rate window has begun');
  assert.equal(b.counters.accepted, 6);
  assert.equal(b.table.stateOf(peer), 'up');
});
