/**
 * A2A figures, each beside its baseline measured in the same run (figures only; nothing passes or
 * fails on time):
 *  1. verify-and-forward latency: a client signs peer_hello (node:crypto) and POSTs it to the hub,
 *     which verifies it, claims its nonce, resolves the target and calls the device's sidecar over
 *     mutual TLS (a fresh TLS 1.3 connection, as the hub makes for each query); beside a direct mTLS
 *     call to the same sidecar with the hub's own client code. The ratio is what signing, HTTP to
 *     the hub and verification add to the peer call they carry.
 *  2. bare verifyA2a per second (form, window, HMAC in constant time) beside one HMAC-SHA256 over
 *     the same canonical string.
 * The sidecar is the peer-mesh plugin's own SidecarServer, in this process, with fleet certificates.
 */
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalA2aString, signA2a, verifyA2a, type A2aRequest } from '../../lib/auth/a2a-signature.js';
import { MemoryBus } from '../../core/src/bus/memory-bus.js';
import { createLogger } from '../../core/src/log/logger.js';
import { peerHelloOverMtls } from '../../hub/plugins/a2a/src/sidecar-client.js';
import { MemoryStateStore } from '../../hub/src/state/memory-state-store.js';
import { checkSidecarMaterial } from '../../plugins/peer-mesh/src/sidecar-material.js';
import { SidecarServer } from '../../plugins/peer-mesh/src/sidecar-server.js';
import { a2aTestHub } from '../support/a2a-helpers.js';
import { a2aKeyFromFleetSecret, send, signPeerQuery } from '../support/a2a-plain-client.js';
import { msg, TEST_FLEET_SECRET } from '../support/hub-helpers.js';
import { provisionTestFleetCerts } from '../support/fleet-certs.js';
import { scratchDir } from '../support/scratch-dir.js';

const WARMUP = 20;
const QUERIES = 300;
const VERIFY_ROUNDS = 5;
const VERIFY_PER_ROUND = 50_000;

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const ms = (x: number) => `${x.toFixed(2).padStart(7)} ms`;

async function timed(n: number, fn: () => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

async function latency(): Promise<void> {
  const scratch = await scratchDir('lookout-a2a-bench-');
  const fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), {
    devices: [{ id: 'bench-cam', dataRoot: join(scratch.dir, 'bench-cam'), ips: ['127.0.0.1'] }],
    hubDataDir: join(scratch.dir, 'hub'),
  });
  const device = fleet.device('bench-cam');
  const material = await checkSidecarMaterial(device);
  if (!material.ok) throw new Error(material.problem);
  const sidecar = new SidecarServer({
    host: '127.0.0.1',
    port: 0,
    material: material.material,
    log: createLogger({ level: 'silent' }),
    peerHello: (caller) => ({
      q: 'peer_hello',
      ack: true,
      device_id: 'bench-cam',
      cert_fingerprint: device.fingerprint,
      peer_comm_status: 'ok',
      peers_up: 0,
      caller,
      received_at: new Date().toISOString(),
    }),
  });
  const port = await sidecar.listen();
  const bus = new MemoryBus();
  const hub = await a2aTestHub({ bus, dataDir: join(scratch.dir, 'hub'), stateStore: new MemoryStateStore() });
  try {
    await bus.publish('devices/bench-cam/hello', JSON.stringify({ ...msg.hello('bench-cam', ['127.0.0.1'], 9), ports: { tools: 9, sidecar: port } }));
    const hubTls = fleet.hub();
    const tls = { key: await readFile(hubTls.keyPath), cert: await readFile(hubTls.certPath), ca: await readFile(hubTls.caPath) };
    const key = a2aKeyFromFleetSecret(TEST_FLEET_SECRET);
    const direct = () =>
      peerHelloOverMtls({ host: '127.0.0.1', port, deviceId: 'bench-cam', tls, timeoutMs: 5000, signal: new AbortController().signal }).then(() => undefined);
    const viaHub = async () => {
      const r = await send(
        signPeerQuery(hub.url, key, [
          ['q', 'peer_hello'],
          ['target', 'bench-cam'],
        ]),
      );
      if (r.status !== 200) throw new Error(`the hub answered ${r.status}: ${JSON.stringify(r.body)}`);
    };
    await timed(WARMUP, direct);
    await timed(WARMUP, viaHub);
    // Interleaved halves, so that a slower stretch of the machine weighs on both paths alike.
    const d: number[] = [];
    const h: number[] = [];
    for (let half = 0; half < 2; half++) {
      d.push(...(await timed(QUERIES / 2, direct)));
      h.push(...(await timed(QUERIES / 2, viaHub)));
    }
    console.log(`peer_hello latency, ${QUERIES} sequential queries each (fresh mTLS connection per query), node ${process.version}`);
    console.log(`  direct mTLS to the sidecar        median ${ms(quantile(d, 0.5))}   p95 ${ms(quantile(d, 0.95))}`);
    console.log(`  signed POST /a2a/query via hub    median ${ms(quantile(h, 0.5))}   p95 ${ms(quantile(h, 0.95))}`);
    console.log(`  ratio (via hub / direct, medians) ${(quantile(h, 0.5) / quantile(d, 0.5)).toFixed(2)}x`);
  } finally {
    await hub.close();
    await bus.close();
    await sidecar.close();
    await scratch.cleanup();
  }
}

function verifyRate(): void {
  const key = 'a2a-bench-key-0123456789abcdef';
  const request: A2aRequest = { method: 'POST', path: '/a2a/query', query: { q: 'peer_hello', target: 'bench-cam' }, body: Buffer.alloc(0) };
  const now = Date.now();
  const headers = Object.fromEntries(Object.entries(signA2a(key, request, now)).map(([k, v]) => [k.toLowerCase(), v]));
  const canonical = canonicalA2aString(request, headers['x-lookout-timestamp'], headers['x-lookout-nonce']);
  const rate = (fn: () => void) => {
    const t0 = performance.now();
    for (let i = 0; i < VERIFY_PER_ROUND; i++) fn();
    return VERIFY_PER_ROUND / ((performance.now() - t0) / 1000);
  };
  const bare: number[] = [];
  const verify: number[] = [];
  for (let round = 0; round < VERIFY_ROUNDS; round++) {
    bare.push(rate(() => createHmac('sha256', key).update(canonical).digest()));
    verify.push(
      rate(() => {
        if (!verifyA2a(key, request, headers, now).ok) throw new Error('verifyA2a refused a good signature');
      }),
    );
  }
  const fmt = (n: number) => `${Math.round(n).toLocaleString('en-US').padStart(10)} /s`;
  console.log(`verifyA2a, ${VERIFY_PER_ROUND} per round, median of ${VERIFY_ROUNDS} rounds`);
  console.log(`  HMAC-SHA256 of the canonical string  ${fmt(quantile(bare, 0.5))}`);
  console.log(
    `  verifyA2a                            ${fmt(quantile(verify, 0.5))}   (form, window, canonical string with the body's SHA-256, HMAC, constant-time compare)`,
  );
  console.log(`  ratio (verifyA2a / bare HMAC)        ${(quantile(verify, 0.5) / quantile(bare, 0.5)).toFixed(2)}x`);
}

await latency();
verifyRate();
