/**
 * Simulated devices for the load benches (fleet-load, replicas-soak): each on its own MQTT
 * connection does what a real device does: hello (the hello contract), retained status, then dets
 * and telemetry at `rateHz` each, QoS 1, every device with its own phase. A worker is a child process
 * (this file run with `--devices …`) with its share of the fleet, so that the generator is not the
 * bottleneck; several of them make a fleet.
 *
 * Every dets and telemetry message carries `seq`, the device's own count on that topic from 1, so a
 * bench can say which of a device's messages arrived (the hub's latest view shows the telemetry's
 * `seq`; the dets' track id stays 7, as a tracked object's does, not to grow the hub's per-track work). The worker prints JSON lines: `progress`
 * every `progressMs` (messages the broker acknowledged so far) and `done` at the end, with each
 * device's last acknowledged sequence number per topic.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { connect, type MqttClient } from 'mqtt';
import { HelloMessageSchema } from '../../core/src/contracts/hello-message.js';
import { msg } from '../support/hub-helpers.js';

export const deviceId = (i: number) => `fleet-${String(i).padStart(5, '0')}`;

export function mqttConnect(url: string, clientId: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = connect(url, { clientId, protocolVersion: 4, reconnectPeriod: 0, keepalive: 120 });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}

export const pub = (c: MqttClient, topic: string, body: unknown, retain = false) =>
  new Promise<void>((resolve, reject) => c.publish(topic, JSON.stringify(body), { qos: 1, retain }, (err) => (err ? reject(err) : resolve())));

/**
 * A hello as a device's identity plugin sends it, checked against the contract here so the benches
 * cannot drift from it. Each device announces a label of its own, as a fleet's cameras name their
 * places (a label announced by every device is refused to all but the first: a misconfigured fleet).
 */
export function hello(id: string) {
  return HelloMessageSchema.parse({
    ...msg.hello(id, ['127.0.0.1'], Number(process.env.LOOKOUT_BENCH_TOOL_PORT ?? 9), [`door-${id}`]),
    serial: `SER-${id}`,
    versions: { runtime: '0.1.0', plugins: { status: '0.1.0' } },
  });
}

/** Per device: the last sequence number the broker acknowledged on each topic. */
export type LastAcked = Record<string, { dets: number; telemetry: number }>;

export interface WorkerOptions {
  url: string;
  /** Devices [from, to) of the fleet (deviceId(i)). */
  from: number;
  to: number;
  /** When they start connecting (ms since the epoch), all of them within `spreadMs`. */
  startAt: number;
  seconds: number;
  /** Dets and telemetry each at this rate. */
  rateHz: number;
  spreadMs: number;
  progressMs?: number;
}

export interface DeviceWorker {
  child: ChildProcess;
  /** Messages the broker acknowledged so far (every topic), from the worker's last progress line. */
  readonly acked: number;
  /** Of them, the numbered ones (dets and telemetry). */
  readonly numbered: number;
  /** Resolves when the worker has exited: what it sent (acknowledged) and each device's last sequence numbers. */
  done: Promise<{ sent: number; failed: number; last: LastAcked }>;
}

/** Starts a worker process for devices [from, to). */
export function spawnDeviceWorker(o: WorkerOptions): DeviceWorker {
  const args = [o.url, o.from, o.to, o.startAt, o.seconds, o.rateHz, o.spreadMs, o.progressMs ?? 1000].map(String);
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--devices', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let acked = 0;
  let numbered = 0;
  let result: { sent: number; failed: number; last: LastAcked } | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    const m = JSON.parse(line) as { event: string; acked?: number; numbered?: number; sent?: number; failed?: number; last?: LastAcked };
    if (m.event === 'progress') [acked, numbered] = [m.acked!, m.numbered!];
    if (m.event === 'done') result = { sent: m.sent!, failed: m.failed!, last: m.last! };
  });
  const done = new Promise<{ sent: number; failed: number; last: LastAcked }>((resolve, reject) =>
    // 'close', not 'exit': its stdout (the count it sent) is read to the end by then.
    child.once('close', (code) => (code === 0 && result ? resolve(result) : reject(new Error(`device worker exited with ${code}`)))),
  );
  return {
    child,
    get acked() {
      return result?.sent ?? acked;
    },
    get numbered() {
      return result ? Object.values(result.last).reduce((n, l) => n + l.dets + l.telemetry, 0) : numbered;
    },
    done,
  };
}

/**
 * Devices [from, to): each connects within `spreadMs` of `startAt`, says hello and its status, then
 * publishes dets and telemetry at `rateHz` each, at a phase of its own, until `seconds` after startAt.
 * One 5 ms tick drives them all (a timer per device would cost the generator more than the load).
 */
async function runDevices(url: string, from: number, to: number, startAt: number, seconds: number, rateHz: number, spreadMs: number, progressMs: number) {
  const periodMs = 1000 / rateHz;
  const endAt = startAt + seconds * 1000;
  let sent = 0;
  let acked = 0;
  let numberedAcked = 0;
  let failed = 0;
  type Device = { id: string; client?: MqttClient; phase: number; dets: number; telemetry: number; seq: { dets: number; telemetry: number } };
  const fleet: Device[] = [];
  const last: LastAcked = {};
  for (let i = from; i < to; i++) {
    const id = deviceId(i);
    fleet.push({ id, phase: Math.random() * periodMs, dets: 0, telemetry: 0, seq: { dets: 0, telemetry: 0 } });
    last[id] = { dets: 0, telemetry: 0 };
  }
  await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
  const progress = setInterval(() => process.stdout.write(`${JSON.stringify({ event: 'progress', acked, numbered: numberedAcked })}\n`), progressMs);
  const unacked = new Set<Promise<void>>();
  const send = (c: MqttClient, topic: string, body: unknown, retain = false, onAck?: () => void) => {
    sent++;
    const p = pub(c, topic, body, retain)
      .then(() => {
        acked++;
        onAck?.();
      })
      .catch(() => void failed++)
      .finally(() => unacked.delete(p));
    unacked.add(p);
  };
  const numbered = (d: Device, topic: 'dets' | 'telemetry') => {
    const n = ++d.seq[topic];
    const body = topic === 'dets' ? { ...msg.dets(1, 7), seq: n } : { ...msg.telemetry(), seq: n };
    send(d.client!, `devices/${d.id}/${topic}`, body, false, () => {
      numberedAcked++;
      last[d.id][topic] = Math.max(last[d.id][topic], n);
    });
  };
  const joined = fleet.map(async (d) => {
    await new Promise((r) => setTimeout(r, Math.random() * spreadMs));
    // A refused connect (the broker's accept queue full while a fleet connects) is tried again, as a device does.
    let c: MqttClient | undefined;
    for (let attempt = 0; !c; attempt++) {
      try {
        c = await mqttConnect(url, d.id);
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 250 + Math.random() * 750));
      }
    }
    send(c, `devices/${d.id}/hello`, hello(d.id));
    send(c, `devices/${d.id}/status`, msg.status(d.id), true);
    // Dets on the device's phase, telemetry half a period later: the two streams interleave.
    d.dets = Date.now() + d.phase;
    d.telemetry = d.dets + periodMs / 2;
    d.client = c;
  });
  while (Date.now() < endAt) {
    const now = Date.now();
    for (const d of fleet) {
      if (!d.client) continue;
      // Fallen behind (a loaded machine): skip a beat rather than burst.
      if (now >= d.dets) {
        numbered(d, 'dets');
        d.dets = Math.max(d.dets + periodMs, now);
      }
      if (now >= d.telemetry) {
        numbered(d, 'telemetry');
        d.telemetry = Math.max(d.telemetry + periodMs, now);
      }
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(joined);
  // Every publish acknowledged before the connections end (ending them fails what is in flight, which the broker may have taken).
  await Promise.race([Promise.all(unacked), new Promise((r) => setTimeout(r, 60_000))]);
  clearInterval(progress);
  await Promise.all(fleet.map((d) => new Promise<void>((resolve) => (d.client ? d.client.end(false, {}, () => resolve()) : resolve()))));
  // Exit once the line is out: stdout to a pipe is written asynchronously.
  process.stdout.write(`${JSON.stringify({ event: 'done', sent: sent - failed, failed, last })}\n`, () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--devices') {
  const [url, from, to, startAt, seconds, rateHz, spreadMs, progressMs] = process.argv.slice(3);
  await runDevices(url, Number(from), Number(to), Number(startAt), Number(seconds), Number(rateHz), Number(spreadMs), Number(progressMs));
}
