/**
 * Sealed mesh datagrams (heartbeats and acks under each pair's key) one device verifies per second,
 * beside a bare HMAC-SHA256 over the same bytes measured in the same run (the floor: any verifier
 * computes that MAC). Three paths: the baseline, the plugin's verifier (framing, sender lookup,
 * constant-time MAC compare, JSON, fields, self and receiver checks, replay window and per-boot
 * sequence) and the node's whole receive path (per-address rate, verifier with the source-network
 * check, peer table update). Figures only; nothing here passes or fails on time.
 */
import { createHmac, X509Certificate } from 'node:crypto';
import { createLogger } from '../../core/src/log/logger.js';
import { encodeSealed, type MeshMessage } from '../../plugins/peer-mesh/src/datagram.js';
import { MeshNetworks } from '../../plugins/peer-mesh/src/mesh-networks.js';
import { MeshNode } from '../../plugins/peer-mesh/src/mesh-node.js';
import { MeshVerifier, type SenderKnowledge } from '../../plugins/peer-mesh/src/mesh-verifier.js';
import { meshFleet } from '../unit/plugins/peer-mesh/mesh-fleet.js';

const KEY = Buffer.from('mesh-bench-key-0123456789abcdef');
const SENDERS = 8;
const PER_SENDER = 25_000;
const ROUNDS = 5;
const NOW = Date.now();

const fleet = await meshFleet(['cam-self', ...Array.from({ length: SENDERS }, (_, s) => `cam-${s}`)]);
const self = fleet.identity('cam-self');
const pairKeys = Array.from({ length: SENDERS }, (_, s) =>
  self.pairKey(KEY, `cam-${s}`, new X509Certificate(fleet.identity(`cam-${s}`).certificate).publicKey),
);

// Heartbeats of 8 peers, interleaved, each sender's sequence increasing: every one is accepted once.
function datagrams(boot: string): Buffer[] {
  const out: Buffer[] = [];
  for (let seq = 1; seq <= PER_SENDER; seq++) {
    for (let s = 0; s < SENDERS; s++) {
      const m: MeshMessage = { t: 'ack', from: `cam-${s}`, to: 'cam-self', seq, ts: NOW, boot, echo: seq, mesh_port: 11555, sidecar_port: 8777 };
      out.push(encodeSealed(m, pairKeys[s]));
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
  baseline.push(rate(batch, (d) => (sink += createHmac('sha256', KEY).update(d.subarray(42)).digest()[0])));
  const verifier = new MeshVerifier(self, KEY, 30_000, 2 * SENDERS);
  const knows: SenderKnowledge = {
    pairKey: (sender) => pairKeys[Number(sender.slice(4))] ?? null,
    mayIntroduce: () => 'unknown',
    sourceAdmitted: () => true,
  };
  verified.push(rate(batch, (d) => verifier.verify(d, NOW, knows, '127.0.0.1')));
  if (verifier.counters.accepted !== batch.length) throw new Error(`verifier accepted ${verifier.counters.accepted} of ${batch.length}`);
  const node = new MeshNode({
    deviceId: 'cam-self',
    host: '127.0.0.1',
    port: 0,
    key: KEY,
    identity: self,
    timings: { heartbeatMs: 2000, suspectMs: 6000, downMs: 10_000, dropMs: 60_000, windowMs: 30_000 },
    maxPeers: 64,
    maxRatePerSender: 1e9,
    networks: new MeshNetworks(['127.0.0.0/8']),
    sidecarPort: () => null,
    now: () => NOW,
    log,
  });
  for (let s = 0; s < SENDERS; s++) {
    node.addPeer({ deviceId: `cam-${s}`, address: '127.0.0.1', meshPort: 20_000 + s, source: 'config' });
    node.table.get(`cam-${s}`)!.pairKey = pairKeys[s]!;
  }
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
await fleet.close();
