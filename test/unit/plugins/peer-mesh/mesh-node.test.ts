import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { createLogger } from '../../../../core/src/log/logger.js';
import { encodeDatagram } from '../../../../plugins/peer-mesh/src/datagram.js';
import { MeshNode } from '../../../../plugins/peer-mesh/src/mesh-node.js';
import { waitFor } from '../../../integration/hub-helpers.js';

const KEY = Buffer.from('mesh-key-for-unit-tests-0123456789');
const log = createLogger({ level: 'silent' });

/** A wall clock the test moves by hand (states, windows); round-trip times use the real monotonic clock. */
const clock = { t: 1_800_000_000_000 };

function node(deviceId: string, o: { key?: Buffer; maxRate?: number } = {}): MeshNode {
  return new MeshNode({
    deviceId,
    host: '127.0.0.1',
    port: 0,
    key: o.key ?? KEY,
    timings: { heartbeatMs: 100, suspectMs: 300, downMs: 600, windowMs: 30_000 },
    maxPeers: 8,
    maxRatePerSender: o.maxRate ?? 1000,
    sidecarPort: () => 8777,
    now: () => clock.t,
    log,
  });
}

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
  clock.t += 400;
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
  const datagram = encodeDatagram({ t: 'hb', from: 'cam-f', seq: 1, ts: clock.t, boot: 'b', mesh_port: 1, sidecar_port: null }, KEY);
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
  b.receive(encodeDatagram({ t: 'hb', from: 'cam-b', seq: 1, ts: clock.t, boot: 'x', mesh_port: 1, sidecar_port: null }, KEY), {
    address: '127.0.0.1',
    port: 1,
  });
  assert.equal(b.counters.dropped_unknown_sender, 1);
  assert.equal(b.table.size, 0);
});
