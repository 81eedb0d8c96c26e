/**
 * Hub ingest over the embedded broker's TLS listener against its plain one, side by side in one
 * run. One `lookout-hub` process (embedded broker listening plain and TLS with a fleet-CA
 * certificate, wire-contract validation, cache) and two MQTT.js publishers in this process, one on
 * `mqtt://`, one on `mqtts://` verifying the fleet CA. Each round, each publisher in turn (the order
 * alternates) sends LOOKOUT_BENCH_MESSAGES (default 20000) spec-shaped dets messages at QoS 1 as
 * fast as the broker acknowledges them (1000 in flight), and the round ends when the hub counted
 * them all as ingested: the rate is messages / (first publish → last ingested). The hub process's
 * CPU time per message (from /proc; it holds the broker, so TLS decryption counts there) is printed
 * too, steadier than wall-clock rates on a shared machine. Medians of LOOKOUT_BENCH_ROUNDS (default 5),
 * after one warm-up round not counted.
 * Printed: both rates, their ratio (aim: TLS / plain >= 0.9), CPU per message and its ratio.
 *
 *   node dist/test/bench/hub-ingest-tls.bench.js            (npm run bench -- hub-ingest-tls)
 *   LOOKOUT_BENCH_MESSAGES=10000 LOOKOUT_BENCH_ROUNDS=3 node dist/test/bench/hub-ingest-tls.bench.js
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { provisionFleetCertificates } from '../../lib/tls/provision-fleet.js';
import { hubServerTlsPaths } from '../../lib/tls/tls-paths.js';

const DEVICES = 50;
const TICKS_PER_SECOND = 100;

function detsMessage(seq: number, device: number): string {
  return JSON.stringify({
    timestamp: new Date().toISOString(),
    camera_id: `cam-${device}`,
    dets: [
      { c: 0, p: 0.91, b: [101.5, 220.25, 180.75, 410.5], track_id: 11 },
      { c: 0, p: 0.84, b: [300.5, 210.25, 352.75, 399.5], track_id: 12 },
      { c: 2, p: 0.66, b: [420.5, 300.25, 600.75, 380.5], track_id: 13 },
    ],
    person_count: 2,
    rf_detr_precomputed: true,
    seq,
  });
}

/** CPU time (user + system) of a process so far, in ms, from /proc. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function ingest(hubUrl: string): Promise<{ valid: number; last_message_at: string }> {
  const res = await fetch(`${hubUrl}/fleet/mqtt/config`);
  return ((await res.json()) as { ingest: { valid: number; last_message_at: string } }).ingest;
}

/** Sends `count` messages at QoS 1 with up to 1000 unacknowledged. */
function publishAll(client: MqttClient, count: number, firstSeq: number): Promise<void> {
  let sent = 0;
  let acked = 0;
  return new Promise((resolve, reject) => {
    const pump = () => {
      while (sent < count && sent - acked < 1000) {
        const seq = firstSeq + sent++;
        client.publish(`devices/bench-${seq % DEVICES}/dets`, detsMessage(seq, seq % DEVICES), { qos: 1 }, (err) => {
          if (err) return reject(err);
          if (++acked === count) resolve();
          else if (sent - acked < 500) setImmediate(pump);
        });
      }
    };
    pump();
  });
}

function mqttClient(url: string, options: IClientOptions): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = connect(url, { protocolVersion: 4, reconnectPeriod: 0, ...options });
    client.once('connect', () => resolve(client));
    client.once('error', reject);
  });
}

async function main(): Promise<void> {
  const perRound = Number(process.env.LOOKOUT_BENCH_MESSAGES ?? 20_000);
  const rounds = Math.max(1, Number(process.env.LOOKOUT_BENCH_ROUNDS ?? 5));
  const dir = mkdtempSync(join(tmpdir(), 'hub-ingest-tls-bench-'));
  const hubDir = join(dir, 'hub');
  await provisionFleetCertificates({ caDir: join(dir, 'ca'), hubDataDir: hubDir });
  const server = hubServerTlsPaths(hubDir);
  const registryFile = join(dir, 'registry.json');
  writeFileSync(registryFile, JSON.stringify({ bus_id: 'bench', devices: Array.from({ length: DEVICES }, (_, i) => ({ device_id: `bench-${i}` })) }));
  const hub = spawn(
    process.execPath,
    [
      join(packageRoot(), 'bin', 'lookout-hub.js'),
      ...['--port', '0', '--broker-port', '0', '--broker-tls-port', '0', '--broker-tls-cert', server.certPath, '--broker-tls-key', server.keyPath],
      // Anonymous (loopback only): one publisher plays every device, on either listener.
      ...['--broker-anonymous', '--data-dir', hubDir, '--registry', registryFile, '--ring-size', '2000', '--json'],
    ],
    { env: { ...process.env, LOOKOUT_LOG_LEVEL: 'error' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const cleanup = () => hub.kill('SIGKILL');
  process.once('exit', cleanup);
  try {
    const ready = await new Promise<{ url: string; broker_port: number; broker_tls_url: string }>((resolve, reject) => {
      let out = '';
      hub.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const line = out.split('\n').find((l) => l.includes('"event":"ready"'));
        if (line) resolve(JSON.parse(line) as { url: string; broker_port: number; broker_tls_url: string });
      });
      hub.once('exit', (code) => reject(new Error(`lookout-hub exited (${code}) before ready`)));
    });
    const ca = readFileSync(join(dir, 'ca', 'ca.crt'));
    const publishers = {
      plain: await mqttClient(`mqtt://127.0.0.1:${ready.broker_port}`, { clientId: 'bench-plain' }),
      tls: await mqttClient(ready.broker_tls_url, { clientId: 'bench-tls', ca, rejectUnauthorized: true }),
    };
    console.log(
      `${rounds} round(s); each ${perRound} dets messages (${detsMessage(0, 0).length} bytes, QoS 1, 1000 in flight) over plain MQTT and over TLS to the embedded broker, ingested by the hub`,
    );
    const rates = { plain: [] as number[], tls: [] as number[] };
    const cpu = { plain: [] as number[], tls: [] as number[] };
    let seq = 0;
    // Round 0 warms both paths up (JIT, TLS session, the hub's caches) and is not counted.
    for (let round = -1; round < rounds; round++) {
      const order = round % 2 === 0 ? (['plain', 'tls'] as const) : (['tls', 'plain'] as const);
      const line: string[] = [];
      for (const variant of order) {
        const before = (await ingest(ready.url)).valid;
        const cpu0 = cpuMs(hub.pid!);
        const t0 = Date.now();
        await publishAll(publishers[variant], perRound, seq);
        seq += perRound;
        let now = await ingest(ready.url);
        while (now.valid - before < perRound) {
          await new Promise((r) => setTimeout(r, 50));
          now = await ingest(ready.url);
        }
        const rate = perRound / ((Date.parse(now.last_message_at) - t0) / 1000);
        const us = ((cpuMs(hub.pid!) - cpu0) * 1000) / perRound;
        if (round >= 0) {
          rates[variant].push(rate);
          cpu[variant].push(us);
        }
        line.push(`${variant} ${Math.round(rate)} msg/s, hub CPU ${us.toFixed(1)} µs/msg`);
        await new Promise((r) => setTimeout(r, 500));
      }
      console.log(`${round < 0 ? 'warm-up' : `round ${round + 1}`}: ${line.join('; ')}`);
    }
    await Promise.all(Object.values(publishers).map((c) => new Promise((r) => c.end(false, {}, r))));
    const ratio = median(rates.tls) / median(rates.plain);
    console.log(`plain MQTT: median ${Math.round(median(rates.plain))} msg/s, hub CPU ${median(cpu.plain).toFixed(1)} µs/msg`);
    console.log(`MQTT over TLS: median ${Math.round(median(rates.tls))} msg/s, hub CPU ${median(cpu.tls).toFixed(1)} µs/msg`);
    console.log(`ratio TLS / plain: ${ratio.toFixed(2)} (aim >= 0.9); hub CPU per message TLS / plain: ${(median(cpu.tls) / median(cpu.plain)).toFixed(2)}`);
  } finally {
    cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
