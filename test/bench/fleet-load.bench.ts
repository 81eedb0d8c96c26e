/**
 * A fleet connecting to one hub, as a user runs it: `lookout-hub --mqtt` (its default plugin set, a
 * process of its own) on a real mosquitto. Simulated devices, each on its own MQTT connection, do
 * what a real device does: hello (the hello contract), retained status, then dets and telemetry at
 * LOOKOUT_BENCH_RATE_HZ each, QoS 1, every device with its own phase. The devices come from several
 * child processes (LOOKOUT_BENCH_WORKERS, fleet-devices.ts), so the generator is not the bottleneck; they all connect
 * within LOOKOUT_BENCH_HELLO_SPREAD_MS, as a fleet does after a hub or broker restart.
 *
 * A probe device publishes a telemetry every LOOKOUT_BENCH_PROBE_MS (200) and polls
 * `GET /fleet/mqtt/latest?device=probe` every 5 ms until it shows: publish→visible latency. The
 * baseline, measured in the same run through the same broker, is a bare MQTT.js subscriber (a
 * process of its own, `devices/#`, it only parses JSON): publish→received of the same probes.
 * Figures per phase: "hellos" (the first LOOKOUT_BENCH_HELLO_PHASE_S seconds, from the first hello)
 * and "steady" (the rest): p50/p99/max of both, the hub's CPU (from /proc) and event-loop delay (its
 * /metrics), then messages lost (hub and bare subscriber) and the hub's RSS/heap per device.
 *
 *   node dist/test/bench/fleet-load.bench.js                        (npm run bench -- fleet-load)
 *   LOOKOUT_BENCH_DEVICES=1000 LOOKOUT_BENCH_RATE_HZ=10 LOOKOUT_BENCH_SECONDS=120 LOOKOUT_BENCH_HELLO_PHASE_S=60 \
 *     LOOKOUT_BENCH_WORKERS=4 node dist/test/bench/fleet-load.bench.js
 *   LOOKOUT_BENCH_HUB_NODE_ARGS='--trace-warnings --cpu-prof --cpu-prof-dir=/tmp/prof' …   (node options for the hub only)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { connect } from 'mqtt';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { startMosquitto } from '../support/mosquitto.js';
import { msg, TEST_FLEET_SECRET } from '../support/hub-helpers.js';
import { hubMetric, pct, procStat } from './process-figures.js';
import { hello, mqttConnect, pub, spawnDeviceWorker } from './fleet-devices.js';

const DEVICES = Number(process.env.LOOKOUT_BENCH_DEVICES ?? 200);
/** Per stream: dets and telemetry each at this rate, so a device sends twice this many messages a second. */
const RATE_HZ = Number(process.env.LOOKOUT_BENCH_RATE_HZ ?? 10);
const SECONDS = Number(process.env.LOOKOUT_BENCH_SECONDS ?? 60);
const HELLO_PHASE_S = Number(process.env.LOOKOUT_BENCH_HELLO_PHASE_S ?? 20);
const HELLO_SPREAD_MS = Number(process.env.LOOKOUT_BENCH_HELLO_SPREAD_MS ?? 2000);
const WORKERS = Number(process.env.LOOKOUT_BENCH_WORKERS ?? 2);
const PROBE_MS = Number(process.env.LOOKOUT_BENCH_PROBE_MS ?? 200);
/**
 * The devices' tool servers, which the hub's readiness checks call: by default nothing listens at
 * the port their hellos announce (a check fails at once); LOOKOUT_BENCH_SILENT_TOOLS=1 gives them one
 * that accepts and never answers (devices behind a dead link: every check runs to its bound).
 */
const SILENT_TOOLS = process.env.LOOKOUT_BENCH_SILENT_TOOLS === '1';
/**
 * LOOKOUT_BENCH_HEAP_SNAPSHOT=1: the hub writes a heap snapshot (--heapsnapshot-signal) before each
 * memory reading, which collects its garbage first, so that heap per device is what the devices keep,
 * not what the last messages left; the snapshots stay in the data dir (printed) to see where it goes.
 */
const HEAP_SNAPSHOT = process.env.LOOKOUT_BENCH_HEAP_SNAPSHOT === '1';
const HUB_NODE_ARGS = (process.env.LOOKOUT_BENCH_HUB_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** The hub's log level (LOOKOUT_BENCH_HUB_LOG_LEVEL=warn shows a lost broker connection). */
const HUB_LOG_LEVEL = process.env.LOOKOUT_BENCH_HUB_LOG_LEVEL ?? 'error';

const agent = new Agent({ keepAlive: true, maxSockets: 2 });
const f = (n: number) => n.toFixed(1);
function getOnce(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A kept-alive socket the hub closed as it idled (the phase scrapes are 20 s apart, and a long stall
 * idles every pooled socket at once) is reset on reuse: asked again, on the next pooled socket or a
 * new one, up to as many times as the pool holds sockets.
 */
async function get(url: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await getOnce(url);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET' || attempt >= agent.maxSockets) throw err;
    }
  }
}

function lines(child: ChildProcess, onLine: (m: Record<string, unknown>) => void): void {
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('{')) onLine(JSON.parse(line) as Record<string, unknown>);
  });
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface PhaseFigures {
  name: string;
  hub: number[];
  bare: number[];
  cpuMs: number;
  seconds: number;
  loopP99Ms: number;
  loopMaxMs: number;
  /** Probes the hub had not shown by the end (its backlog outlasted the run). */
  unseen: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-load-bench-'));
  const broker = await startMosquitto({ maxQueuedMessages: 1_000_000, maxInflightMessages: 1000, extraConfig: ['max_connections -1'] });
  const children: ChildProcess[] = [];
  const silent = createServer(() => undefined);
  if (SILENT_TOOLS) {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    // The device workers inherit it.
    process.env.LOOKOUT_BENCH_TOOL_PORT = String((silent.address() as AddressInfo).port);
  }
  try {
    const hub = spawn(
      process.execPath,
      [
        ...HUB_NODE_ARGS,
        ...(HEAP_SNAPSHOT ? ['--heapsnapshot-signal=SIGUSR2'] : []),
        join(packageRoot(), 'bin', 'lookout-hub.js'),
        '--port',
        '0',
        '--data-dir',
        dir,
        '--mqtt',
        broker.url,
        '--json',
        '--log-level',
        HUB_LOG_LEVEL,
      ],
      {
        env: { ...process.env, LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET, LOOKOUT_HUB_MAX_DEVICES: String(Math.max(10_000, DEVICES + 10)) },
        stdio: ['ignore', 'pipe', 'inherit'],
        // Where its heap snapshots go (LOOKOUT_BENCH_HEAP_SNAPSHOT).
        cwd: dir,
      },
    );
    children.push(hub);
    const hubUrl = await new Promise<string>((resolve, reject) => {
      createInterface({ input: hub.stdout }).once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
      hub.once('exit', (code) => reject(new Error(`hub exited (${code}) before it was ready`)));
    });
    const hubPid = hub.pid!;
    const ingestValid = async () => (JSON.parse(await get(`${hubUrl}/fleet/mqtt/config`)) as { ingest: { valid: number } }).ingest.valid;

    // The baseline: a bare subscriber that parses every message and notes when each probe arrives.
    const bare = spawn(process.execPath, [fileURLToPath(import.meta.url), '--bare', broker.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(bare);
    const bareAt = new Map<number, number>();
    let bareCount = 0;
    const bareReady = new Promise<void>((resolve) =>
      lines(bare, (m) => {
        if (m.event === 'ready') resolve();
        if (m.event === 'probe') bareAt.set(m.seq as number, m.at as number);
        if (m.event === 'count') bareCount = m.count as number;
      }),
    );
    await bareReady;

    // The probe says hello like any device, before the fleet; then its telemetry is what is timed.
    const probe = await mqttConnect(broker.url, 'probe');
    await pub(probe, 'devices/probe/hello', hello('probe'));
    await pub(probe, 'devices/probe/status', msg.status('probe'), true);
    await until(
      async () => (JSON.parse(await get(`${hubUrl}/fleet/mqtt/latest?device=probe`)) as { devices: Record<string, unknown> }).devices.probe !== undefined,
      'the probe in the hub',
    );
    await new Promise((r) => setTimeout(r, 1000));
    const validBefore = await ingestValid();
    await get(`${hubUrl}/metrics`); // prom-client's event-loop figures are since the last scrape: leave start-up out
    const memory = async () => {
      const rss = procStat(hubPid).rssBytes;
      if (HEAP_SNAPSHOT) await heapSnapshot(hub, dir);
      return { rss, heap: hubMetric(await get(`${hubUrl}/metrics`), 'nodejs_heap_size_used_bytes') };
    };
    const memBefore = await memory();

    // The fleet: WORKERS processes, each with its share of the devices.
    const perWorker = Math.ceil(DEVICES / WORKERS);
    const start = Date.now() + 500;
    let sent = 0;
    const workersDone: Promise<void>[] = [];
    for (let w = 0; w < WORKERS; w++) {
      const from = w * perWorker;
      const to = Math.min(DEVICES, from + perWorker);
      if (from >= to) break;
      const worker = spawnDeviceWorker({ url: broker.url, from, to, startAt: start, seconds: SECONDS, rateHz: RATE_HZ, spreadMs: HELLO_SPREAD_MS });
      children.push(worker.child);
      workersDone.push(worker.done.then((r) => void (sent += r.sent)));
    }

    // The probe: publish, then poll the hub until it shows that sequence number.
    const hubAt = new Map<number, number>();
    const probeAt = new Map<number, number>();
    let seq = 0;
    let running = true;
    const poller = (async () => {
      let seen = 0;
      while (running) {
        const body = JSON.parse(await get(`${hubUrl}/fleet/mqtt/latest?device=probe`)) as { devices: { probe?: { payload?: { seq?: number } } } };
        const s = body.devices.probe?.payload?.seq ?? 0;
        if (s > seen) {
          // The probes overtaken since the last poll became visible by now too: a stall counts for each of them.
          const now = Date.now();
          for (let k = seen + 1; k <= s; k++) hubAt.set(k, now);
          seen = s;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const probes: Promise<void>[] = [];
    const timer = setInterval(() => {
      const s = ++seq;
      probeAt.set(s, Date.now());
      probes.push(pub(probe, 'devices/probe/telemetry', { ...msg.telemetry(), seq: s }));
    }, PROBE_MS);

    // Phases: scrape the hub's CPU and event-loop delay at each boundary.
    const phases: PhaseFigures[] = [];
    const boundaries: { name: string; endsAt: number }[] = [
      { name: 'hellos', endsAt: start + HELLO_PHASE_S * 1000 },
      { name: 'steady', endsAt: start + SECONDS * 1000 },
    ];
    await new Promise((r) => setTimeout(r, Math.max(0, start - Date.now())));
    let cpuAt = procStat(hubPid).cpuMs;
    await get(`${hubUrl}/metrics`);
    let phaseStart = Date.now();
    const phaseOf: { name: string; from: number; to: number }[] = [];
    for (const b of boundaries) {
      await new Promise((r) => setTimeout(r, Math.max(0, b.endsAt - Date.now())));
      const m = await get(`${hubUrl}/metrics`);
      const cpu = procStat(hubPid).cpuMs;
      phases.push({
        name: b.name,
        hub: [],
        bare: [],
        unseen: 0,
        cpuMs: cpu - cpuAt,
        seconds: (Date.now() - phaseStart) / 1000,
        loopP99Ms: hubMetric(m, 'nodejs_eventloop_lag_p99_seconds') * 1000,
        loopMaxMs: hubMetric(m, 'nodejs_eventloop_lag_max_seconds') * 1000,
      });
      phaseOf.push({ name: b.name, from: phaseStart, to: Date.now() });
      cpuAt = cpu;
      phaseStart = Date.now();
    }
    await Promise.all(workersDone);
    clearInterval(timer);
    await Promise.all(probes);
    const total = sent + seq;
    // Everything the fleet sent (hellos and statuses included): lost is what the hub never applied.
    const expected = total;
    await until(async () => (await ingestValid()) - validBefore >= expected, 'the hub to apply every message', 30_000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1000));
    running = false;
    await poller;
    const applied = (await ingestValid()) - validBefore;
    const memAfter = await memory();
    bare.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 500));

    for (const [s, at] of probeAt) {
      const phase = phases[phaseOf.findIndex((p) => at >= p.from && at < p.to)];
      if (!phase) continue;
      const h = hubAt.get(s);
      const b = bareAt.get(s);
      if (h !== undefined) phase.hub.push(h - at);
      else phase.unseen++;
      if (b !== undefined) phase.bare.push(b - at);
    }
    console.log(
      `load: ${DEVICES} devices (${WORKERS} processes) × dets + telemetry at ${RATE_HZ} Hz each (QoS 1) = ${DEVICES * RATE_HZ * 2} msg/s for ${SECONDS} s, hellos within ${HELLO_SPREAD_MS} ms; probe every ${PROBE_MS} ms`,
    );
    for (const p of phases) {
      const ratio = (q: number) => (pct(p.hub, q) / Math.max(1, pct(p.bare, q))).toFixed(1);
      console.log(
        `${p.name.padEnd(6)} (${f(p.seconds)} s): hub publish→visible p50 ${f(pct(p.hub, 0.5))} ms, p99 ${f(pct(p.hub, 0.99))} ms, max ${f(pct(p.hub, 1))} ms (${p.hub.length} probes, ${p.unseen} not shown by the end); ` +
          `bare subscriber p50 ${f(pct(p.bare, 0.5))} ms, p99 ${f(pct(p.bare, 0.99))} ms, max ${f(pct(p.bare, 1))} ms; hub / bare p50 ${ratio(0.5)}, p99 ${ratio(0.99)}; ` +
          `hub CPU ${f(p.cpuMs / 1000)} s (${f((p.cpuMs / 1000 / p.seconds) * 100)} % of a core), event-loop delay p99 ${f(p.loopP99Ms)} ms, max ${f(p.loopMaxMs)} ms`,
      );
    }
    console.log(`hub latencies in order (ms): ${[...probeAt.keys()].map((s) => (hubAt.has(s) ? hubAt.get(s)! - probeAt.get(s)! : '-')).join(' ')}`);
    console.log(
      `lost: hub ${Math.max(0, expected - applied)} of ${expected} (applied ${applied}); bare subscriber ${Math.max(0, expected - bareCount)} of ${expected}`,
    );
    console.log(
      `hub memory: RSS ${f(memAfter.rss / 2 ** 20)} MiB, heap used ${f(memAfter.heap / 2 ** 20)} MiB with ${DEVICES} devices; ` +
        `per device (over the hub with the probe alone): RSS ${f((memAfter.rss - memBefore.rss) / DEVICES / 1024)} KiB, heap ${f((memAfter.heap - memBefore.heap) / DEVICES / 1024)} KiB` +
        (HEAP_SNAPSHOT
          ? ` (heap after a full GC; snapshots in ${dir})`
          : ' (heap as found, garbage included: LOOKOUT_BENCH_HEAP_SNAPSHOT=1 collects it first)'),
    );
    probe.end(true);
  } finally {
    agent.destroy();
    for (const c of children.reverse()) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGTERM');
      await exited;
    }
    await broker.stop();
    if (SILENT_TOOLS) {
      silent.closeAllConnections?.();
      await new Promise((resolve) => silent.close(resolve));
    }
  }
}

/**
 * Has the hub write a heap snapshot (a full GC first) into its working directory. The snapshot is
 * taken on the hub's main thread: once its file exists, the next request is answered after it.
 */
async function heapSnapshot(hub: ChildProcess, dir: string): Promise<void> {
  const count = () => readdirSync(dir).filter((n) => n.endsWith('.heapsnapshot')).length;
  const before = count();
  hub.kill('SIGUSR2');
  await until(async () => count() > before, 'the heap snapshot');
}

/** The baseline subscriber: parses every message; reports each probe's arrival, and its count on SIGUSR2. */
function bareSubscriber(url: string): void {
  const client = connect(url, { clientId: 'bench-bare', protocolVersion: 4, reconnectPeriod: 0, keepalive: 120 });
  let count = 0;
  client.on('message', (topic, payload) => {
    const m = JSON.parse(payload.toString('utf8')) as { seq?: number };
    if (!topic.startsWith('devices/probe/')) count++;
    else if (topic === 'devices/probe/telemetry') {
      count++;
      process.stdout.write(`${JSON.stringify({ event: 'probe', seq: m.seq, at: Date.now() })}\n`);
    }
  });
  process.on('SIGUSR2', () => process.stdout.write(`${JSON.stringify({ event: 'count', count })}\n`));
  client.once('connect', () => client.subscribe('devices/#', { qos: 1 }, () => process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`)));
}

if (process.argv[2] === '--bare') bareSubscriber(process.argv[3]);
else await main();
