/**
 * Mesh datagrams one device verifies per second, beside a bare HMAC-SHA256 over the same bytes
 * measured in the same run (the floor: any verifier computes that MAC). Three paths: the baseline,
 * the plugin's verifier (framing, constant-time MAC compare, JSON, fields, self and receiver
 * checks, replay window and per-boot sequence) and the node's whole receive path (per-sender rate,
 * verifier with the source-network check, peer table update). Figures only; nothing here passes or fails on time.
 */
import { createHmac } from 'node:crypto';
import { createLogger } from '../../core/src/log/logger.js';
import { encodeDatagram, type MeshMessage } from '../../plugins/peer-mesh/src/datagram.js';
import { MeshNetworks } from '../../plugins/peer-mesh/src/mesh-networks.js';
import { MeshNode } from '../../plugins/peer-mesh/src/mesh-node.js';
import { MeshVerifier } from '../../plugins/peer-mesh/src/mesh-verifier.js';

const KEY = Buffer.from('mesh-bench-key-0123456789abcdef');
const SENDERS = 8;
const PER_SENDER = 25_000;
const ROUNDS = 5;
const NOW = Date.now();

// Heartbeats of 8 peers, interleaved, each sender's sequence increasing: every one is accepted once.
function datagrams(boot: string): Buffer[] {
  const out: Buffer[] = [];
  for (let seq = 1; seq <= PER_SENDER; seq++) {
    for (let s = 0; s < SENDERS; s++) {
      const m: MeshMessage = { t: 'ack', from: `cam-${s}`, to: 'cam-self', seq, ts: NOW, boot, echo: seq, mesh_port: 11555, sidecar_port: 8777 };
      out.push(encodeDatagram(m, KEY));
    }
  }
  return out;
}

function rate(batch: Buffer[], fn: (d: Buffer) => unknown): number {
  const t0 = performance.now();
  for (const d of batch) fn(d);
  return batch.length / ((performance.now() - t0) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number) => `${Math.round(n).toLocaleString('en-US').padStart(11)} /s`;

let sink = 0;
const baseline: number[] = [];
const verified: number[] = [];
const received: number[] = [];
const log = createLogger({ level: 'silent' });
console.log(`node ${process.version}; ${SENDERS * PER_SENDER} datagrams of ${datagrams('x').at(0)!.length} bytes per round, ${ROUNDS} rounds, median`);
for (let round = 0; round < ROUNDS; round++) {
  // A fresh boot per round: the replay guard accepts each datagram exactly once, as in service.
  const batch = datagrams(`boot${round}`);
  baseline.push(rate(batch, (d) => (sink += createHmac('sha256', KEY).update(d.subarray(36)).digest()[0])));
  const verifier = new MeshVerifier('cam-self', KEY, 30_000, 2 * SENDERS);
  verified.push(rate(batch, (d) => verifier.verify(d, NOW)));
  if (verifier.counters.accepted !== batch.length) throw new Error(`verifier accepted ${verifier.counters.accepted} of ${batch.length}`);
  const node = new MeshNode({
    deviceId: 'cam-self',
    host: '127.0.0.1',
    port: 0,
    key: KEY,
    timings: { heartbeatMs: 2000, suspectMs: 6000, downMs: 10_000, windowMs: 30_000 },
    maxPeers: 64,
    maxRatePerSender: 1e9,
    networks: new MeshNetworks(['127.0.0.0/8']),
    sidecarPort: () => null,
    now: () => NOW,
    log,
  });
  for (let s = 0; s < SENDERS; s++) node.addPeer({ deviceId: `cam-${s}`, address: '127.0.0.1', meshPort: 20_000 + s, source: 'config' });
  const from = Array.from({ length: SENDERS }, (_, s) => ({ address: '127.0.0.1', port: 20_000 + s }));
  let i = 0;
  received.push(rate(batch, (d) => node.receive(d, from[i++ % SENDERS])));
  if (node.counters.accepted !== batch.length) throw new Error(`node accepted ${node.counters.accepted} of ${batch.length}`);
}
const base = median(baseline);
console.log(`bare HMAC-SHA256 (baseline)          ${fmt(base)}`);
console.log(`verifier (MAC, JSON, fields, replay) ${fmt(median(verified))}   ${(median(verified) / base).toFixed(2)}x baseline`);
console.log(`node receive (rate, verify, table)   ${fmt(median(received))}   ${(median(received) / base).toFixed(2)}x baseline`);
if (sink === -1) console.log(sink);
