/**
 * Hub replicas (`lookout-hub --mqtt --state redis://…`, real processes) on a real mosquitto and
 * redis-server, under the same simulated load with one replica and with two:
 *   - CPU per 1 000 messages of each replica (from /proc: user + system time over the load); the
 *     capacity line puts the busiest of n replicas beside one replica: how much more fleet they carry.
 *     Twice more: at saturation (a burst queued at the broker while the replicas are stopped), and
 *     for reading back and applying alone (messages appended to the stream at once). On a machine
 *     whose two CPUs are one core's two threads, two busy replicas each spend more per message than
 *     one alone: compare `2m` with `2` there (the same contention), and one with two on real cores.
 *     LOOKOUT_BENCH_HUB_CPUS=1 runs the hubs on that CPU (taskset) and the rest of the bench on the
 *     others, so that two replicas and one compete alike for their core;
 *   - latest-cache latency: a probe device publishes every 50 ms, timestamped, and a poller on each
 *     replica (every 5 ms: its CPU is in the figure above) notes when
 *     `GET /fleet/mqtt/latest?device=probe` first shows it (p50/p99, to within the 5 ms);
 * and the hot read `GET /fleet/mqtt/latest` of the whole fleet on a replica with Redis state beside
 * a single hub with its state in memory holding the same devices (aim: within 1.2×).
 *
 *   node dist/test/bench/hub-replicas.bench.js        (npm run bench -- hub-replicas)
 *   LOOKOUT_BENCH_DEVICES=500 LOOKOUT_BENCH_RATE_HZ=10 LOOKOUT_BENCH_SECONDS=10 node dist/test/bench/hub-replicas.bench.js
 *   LOOKOUT_BENCH_DEVICES=1000 LOOKOUT_BENCH_RATE_HZ=20 LOOKOUT_BENCH_SCENARIOS=0 LOOKOUT_BENCH_HOT_READ=0 node dist/test/bench/hub-replicas.bench.js
 *   LOOKOUT_BENCH_DEVICES=1000 LOOKOUT_BENCH_RATE_HZ=10 LOOKOUT_BENCH_SCENARIOS=1,2,2m LOOKOUT_BENCH_HOT_READ=0 node dist/test/bench/hub-replicas.bench.js
 * (`2m`: two replicas dividing the apply; the capacity line puts each beside one replica.)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { connect, type MqttClient } from 'mqtt';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { startMosquitto, type Mosquitto } from '../support/mosquitto.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { msg, TEST_FLEET_SECRET } from '../support/hub-helpers.js';
import { pct, procStat } from './process-figures.js';
import { packMessages, type RelayedMessage } from '../../hub/src/state/ingest-batch.js';

const DEVICES = Number(process.env.LOOKOUT_BENCH_DEVICES ?? 200);
const RATE_HZ = Number(process.env.LOOKOUT_BENCH_RATE_HZ ?? 10);
const SECONDS = Number(process.env.LOOKOUT_BENCH_SECONDS ?? 8);
const READS = 200;
/**
 * Which scenarios run: 0 is the single hub with its state in memory, n > 0 that many replicas each
 * applying every message (`--mirror-interval-ms 0`), `<n>m` that many replicas dividing the apply
 * (`--mirror-interval-ms LOOKOUT_BENCH_MIRROR_MS`, default 1000, the hub's default).
 */
const SCENARIOS = (process.env.LOOKOUT_BENCH_SCENARIOS ?? '0,1,2,2m').split(',');
const MIRROR_MS = process.env.LOOKOUT_BENCH_MIRROR_MS ?? '1000';
/** Messages of each saturation burst after the load (drainBacklog), and how many bursts; 0 leaves them out. */
const DRAIN = Number(process.env.LOOKOUT_BENCH_DRAIN ?? 20_000);
const DRAIN_ROUNDS = Number(process.env.LOOKOUT_BENCH_DRAIN_ROUNDS ?? 3);
/** Messages appended to the stream at once after the bursts (catchUpStream); 0 leaves it out. */
const CATCH_UP = Number(process.env.LOOKOUT_BENCH_CATCH_UP ?? 100_000);
/** LOOKOUT_BENCH_HOT_READ=0 leaves out the hot-read comparison. */
const HOT_READ = process.env.LOOKOUT_BENCH_HOT_READ !== '0';
/** Node options for the hubs only, e.g. LOOKOUT_BENCH_HUB_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'. */
const HUB_NODE_ARGS = (process.env.LOOKOUT_BENCH_HUB_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** CPUs the hubs run on (taskset -c), e.g. `1`; the bench, its broker, Redis and load then run on the others. */
const HUB_CPUS = process.env.LOOKOUT_BENCH_HUB_CPUS;
/** The hubs' log level (LOOKOUT_BENCH_HUB_LOG_LEVEL=warn shows why a replica gave up a connection). */
const HUB_LOG_LEVEL = process.env.LOOKOUT_BENCH_HUB_LOG_LEVEL ?? 'error';

const ids = Array.from({ length: DEVICES }, (_, i) => `bench-${String(i).padStart(4, '0')}`);
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
const f = (n: number) => n.toFixed(2);

interface Hub {
  url: string;
  child: ChildProcess;
}

function get(url: string): Promise<{ ms: number; body: string }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function startHubProcess(args: string[], dataDir: string, setFile: string): Promise<Hub> {
  const command = [
    process.execPath,
    ...HUB_NODE_ARGS,
    join(packageRoot(), 'bin', 'lookout-hub.js'),
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--plugin-set',
    setFile,
    '--json',
    '--log-level',
    HUB_LOG_LEVEL,
    ...args,
  ];
  // taskset execs node: the child's pid is the hub's, whose CPU time procStat reads.
  const pinned = HUB_CPUS ? ['taskset', '-c', HUB_CPUS, ...command] : command;
  const child = spawn(pinned[0], pinned.slice(1), {
    env: { ...process.env, LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET, LOOKOUT_HUB_MAX_DEVICES: '20000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`hub exited (${code}) before it was ready`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

async function stopHub(h: Hub): Promise<void> {
  if (h.child.exitCode !== null) return;
  const exited = new Promise((resolve) => h.child.once('exit', resolve));
  h.child.kill('SIGTERM');
  await exited;
}

function mqttConnect(url: string, clientId: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = connect(url, { clientId, protocolVersion: 4, reconnectPeriod: 0 });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}

const pub = (c: MqttClient, topic: string, body: unknown, retain = false) =>
  new Promise<void>((resolve, reject) => c.publish(topic, JSON.stringify(body), { qos: 1, retain }, (err) => (err ? reject(err) : resolve())));

async function announce(c: MqttClient): Promise<void> {
  for (const id of [...ids, 'probe']) {
    await pub(c, `devices/${id}/hello`, msg.hello(id, ['127.0.0.1'], 20_000), true);
    await pub(c, `devices/${id}/status`, msg.status(id), true);
    await pub(c, `devices/${id}/health`, msg.health(id));
  }
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The load on every device plus the probe; per replica: CPU per 1 000 messages and probe-visible latency. */
async function scenario(broker: Mosquitto, redis: RedisServer, name: string, dir: string, setFile: string) {
  const replicas = Number.parseInt(name, 10);
  const mirror = ['--mirror-interval-ms', name.endsWith('m') ? MIRROR_MS : '0'];
  const prefix = `bench-${name}:`;
  const hubs: Hub[] = [];
  // 0: the baseline, one hub on the same broker with its state in this process (no Redis, no relay).
  if (replicas === 0) hubs.push(await startHubProcess(['--mqtt', broker.url], join(dir, 'single'), setFile));
  for (let i = 0; i < replicas; i++) {
    hubs.push(
      await startHubProcess(
        ['--mqtt', broker.url, '--state', redis.url, '--state-prefix', prefix, '--mqtt-group', `bench${name}`, ...mirror],
        join(dir, `r${name}-${i}`),
        setFile,
      ),
    );
  }
  const publisher = await mqttConnect(broker.url, `bench-publisher-${name}`);
  await announce(publisher);
  await until(async () => {
    const counts = await Promise.all(hubs.map(async (h) => (JSON.parse((await get(`${h.url}/fleet/mqtt/latest`)).body) as { count: number }).count));
    return counts.every((n) => n === DEVICES + 1);
  }, 'every replica to list the fleet');

  const latencies: number[][] = hubs.map(() => []);
  let probeSeq = 0;
  let running = true;
  const probeAt = new Map<number, number>();
  const probesSent: Promise<void>[] = [];
  const pollers = hubs.map(async (h, i) => {
    let seen = 0;
    while (running) {
      const body = JSON.parse((await get(`${h.url}/fleet/mqtt/latest?device=probe`)).body) as { devices: { probe?: { payload?: { seq?: number } } } };
      const seq = body.devices.probe?.payload?.seq ?? 0;
      if (seq > seen) {
        // Probes overtaken between two polls are not counted (their time is not known).
        const at = probeAt.get(seq);
        if (at !== undefined) latencies[i].push(Date.now() - at);
        seen = seq;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  if (name.endsWith('m')) {
    await until(async () => {
      const cfgs = await Promise.all(hubs.map(async (h) => JSON.parse((await get(`${h.url}/fleet/mqtt/config`)).body) as MirrorConfig));
      return cfgs.every((c) => c.state.details.mirror?.replicas === replicas);
    }, 'the replicas to see each other');
  }
  const redisCalls = () => redisCommandCalls(redis.url);
  const callsBefore = replicas > 0 ? await redisCalls() : 0;
  // prom-client's event-loop delay figures are since the last scrape: this one leaves the start-up out.
  await Promise.all(hubs.map((h) => get(`${h.url}/metrics`)));
  const cpuBefore = hubs.map((h) => procStat(h.child.pid!).cpuMs);
  // The load comes from a process of its own, so the probe's messages do not queue behind its bursts
  // in one client, nor the pollers behind its work in one event loop.
  const load = spawn(process.execPath, [fileURLToPath(import.meta.url), '--load-publisher', broker.url, String(SECONDS), String(RATE_HZ), name], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const loadDone = new Promise<number>((resolve, reject) => {
    createInterface({ input: load.stdout }).once('line', (line) => resolve((JSON.parse(line) as { sent: number }).sent));
    load.once('exit', (code) => code !== 0 && reject(new Error(`the load publisher exited with ${code}`)));
  });
  const started = Date.now();
  const probe = setInterval(() => {
    const seq = ++probeSeq;
    probeAt.set(seq, Date.now());
    probesSent.push(pub(publisher, 'devices/probe/telemetry', { ...msg.telemetry(), seq }));
  }, 50);
  const sent = await loadDone;
  clearInterval(probe);
  await Promise.all(probesSent);
  const total = sent + probeSeq;
  // Until every replica has applied everything (the stream is read by each; with a mirror, another's devices within the interval).
  await until(async () => {
    const cfgs = await Promise.all(hubs.map(async (h) => JSON.parse((await get(`${h.url}/fleet/mqtt/config`)).body) as { ingest: { valid: number } }));
    return cfgs.every((c) => c.ingest.valid >= total + 3 * (DEVICES + 1));
  }, 'every replica to apply every message');
  const cpu = hubs.map((h, i) => procStat(h.child.pid!).cpuMs - cpuBefore[i]);
  running = false;
  await Promise.all(pollers);
  // How many messages each replica applied one by one (of another's devices, only the newest of each interval).
  const appliedHere = await Promise.all(
    hubs.map(async (h) => (JSON.parse((await get(`${h.url}/fleet/mqtt/config`)).body) as { state: { details?: { applied?: number } } }).state.details?.applied),
  );
  const loops = await Promise.all(hubs.map(async (h) => loopFigures((await get(`${h.url}/metrics`)).body)));
  const redisCallsPer1000 = replicas > 0 ? ((await redisCalls()) - callsBefore) / (total / 1000) : 0;
  let drain: Awaited<ReturnType<typeof drainBacklog>> | undefined;
  let applied = total + 3 * (DEVICES + 1);
  for (let round = 0; DRAIN > 0 && round < DRAIN_ROUNDS; round++) {
    // The bursts' figures add up: each is short (queued within the heartbeats' 4 s), their sum less noisy.
    const d = await drainBacklog(broker.url, hubs, name, applied);
    applied += d.sent;
    drain = drain
      ? {
          sent: drain.sent + d.sent,
          fillMs: Math.max(drain.fillMs, d.fillMs),
          elapsedMs: drain.elapsedMs + d.elapsedMs,
          cpu: drain.cpu.map((c, i) => c + d.cpu[i]),
        }
      : d;
  }
  const catchUp = replicas > 0 && CATCH_UP > 0 ? await catchUpStream(redis.url, prefix, hubs, applied) : undefined;
  publisher.end(true);
  for (const h of hubs) await stopHub(h);
  return { total, cpu, applied: appliedHere, latencies, loops, redisCallsPer1000, drain, catchUp, elapsedS: (Date.now() - started) / 1000 };
}

/**
 * The replicas at saturation: stopped (SIGSTOP) while a burst of DRAIN messages queues at the broker
 * for their sessions, then let go: how long they take to apply it all and their CPU per message then,
 * when every batch is full and what a replica spends whatever its load (pollers, timers) is left out.
 * The burst must queue within the heartbeats' 4 s, else the replicas take over each other's sessions.
 */
async function drainBacklog(brokerUrl: string, hubs: Hub[], name: string, appliedBefore: number) {
  for (const h of hubs) process.kill(h.child.pid!, 'SIGSTOP');
  const fillStarted = Date.now();
  const burst = spawn(process.execPath, [fileURLToPath(import.meta.url), '--burst-publisher', brokerUrl, String(DRAIN), name], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const sent = await new Promise<number>((resolve, reject) => {
    createInterface({ input: burst.stdout }).once('line', (line) => resolve((JSON.parse(line) as { sent: number }).sent));
    burst.once('exit', (code) => code !== 0 && reject(new Error(`the burst publisher exited with ${code}`)));
  });
  const fillMs = Date.now() - fillStarted;
  const cpuBefore = hubs.map((h) => procStat(h.child.pid!).cpuMs);
  const started = Date.now();
  for (const h of hubs) process.kill(h.child.pid!, 'SIGCONT');
  await until(async () => {
    const cfgs = await Promise.all(hubs.map(async (h) => JSON.parse((await get(`${h.url}/fleet/mqtt/config`)).body) as { ingest: { valid: number } }));
    return cfgs.every((c) => c.ingest.valid >= appliedBefore + sent);
  }, 'every replica to apply the burst');
  const elapsedMs = Date.now() - started;
  return { sent, fillMs, elapsedMs, cpu: hubs.map((h, i) => procStat(h.child.pid!).cpuMs - cpuBefore[i]) };
}

interface MirrorConfig {
  state: { details: { mirror: { replicas: number } | null } };
}

/** Commands Redis has run since it started (INFO commandstats), all replicas together. */
async function redisCommandCalls(url: string): Promise<number> {
  const client = new Redis(url, { lazyConnect: true });
  await client.connect();
  try {
    const info = await client.info('commandstats');
    return [...info.matchAll(/calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  } finally {
    client.disconnect();
  }
}

/** The hub's own event-loop delay over the load and its GC time (prom-client's default metrics), the usual causes of a latency tail. */
function loopFigures(metrics: string): string {
  const value = (name: string) => Number(new RegExp(`^lookout_hub_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  const gcSum = [...metrics.matchAll(/^lookout_hub_nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} (\S+)$/gm)].map(
    (m) => `${m[1]} ${f(Number(m[2]) * 1000)} ms`,
  );
  return `event-loop delay p99 ${f(value('nodejs_eventloop_lag_p99_seconds') * 1000)} ms, max ${f(value('nodejs_eventloop_lag_max_seconds') * 1000)} ms; GC since the hub started: ${gcSum.join(', ')}`;
}

async function hotRead(url: string): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 20; i++) await get(`${url}/fleet/mqtt/latest`);
  const times: number[] = [];
  for (let i = 0; i < READS; i++) times.push((await get(`${url}/fleet/mqtt/latest`)).ms);
  return { p50: pct(times, 0.5), p99: pct(times, 0.99) };
}

async function main(): Promise<void> {
  if (HUB_CPUS) {
    // Everything but the hubs (this process, and the broker, Redis and load it starts) on the other CPUs.
    const others = Array.from({ length: availableParallelism() }, (_, i) => i).filter((i) => !HUB_CPUS.split(',').map(Number).includes(i));
    execFileSync('taskset', ['-pc', others.join(','), String(process.pid)], { stdio: 'ignore' });
  }
  const dir = mkdtempSync(join(tmpdir(), 'hub-replicas-bench-'));
  const setFile = join(dir, 'plugins.json');
  writeFileSync(
    setFile,
    JSON.stringify({ name: 'bench', plugins: ['hub-meta', 'debug-ring', 'bus-cache', 'registry', 'fleet-health'], essential: ['bus-cache'] }),
  );
  const [broker, redis] = await Promise.all([startMosquitto({ maxQueuedMessages: 1_000_000, maxInflightMessages: 1000 }), startRedis()]);
  try {
    console.log(`load: ${DEVICES} devices × ${RATE_HZ} Hz telemetry (QoS 1) for ${SECONDS} s, one publisher, plus a probe every 50 ms`);
    const p99s = new Map<string, number>();
    /** Per scenario: its busiest replica's CPU per 1 000 fleet messages (what bounds the fleet it carries). */
    const busiest = new Map<string, number>();
    /** The same at saturation (the burst). */
    const drained = new Map<string, number>();
    /** What each replica spends reading back and applying (the stream appended at once). */
    const caughtUp = new Map<string, number>();
    for (const name of SCENARIOS) {
      const n = Number.parseInt(name, 10);
      const label =
        n === 0 ? 'baseline: one hub, state in memory' : `${n} replica(s)${name.endsWith('m') ? ` dividing the apply (mirror ${MIRROR_MS} ms)` : ''}`;
      // A broker and a Redis of its own: the sessions an earlier scenario's replicas leave (kept an hour)
      // would have the broker queue every message for them too, a load the later scenarios alone would carry.
      const own = await Promise.all([startMosquitto({ maxQueuedMessages: 1_000_000, maxInflightMessages: 1000 }), startRedis()]);
      const r = await scenario(own[0], own[1], name, dir, setFile).finally(() => Promise.all([own[0].stop(), own[1].stop()]));
      // A scenario's figure is its worst replica's p99 (each replica's pollers see every probe).
      p99s.set(name, Math.max(...r.latencies.map((lat) => pct(lat, 0.99))));
      busiest.set(name, Math.max(...r.cpu.map((cpu) => (cpu / r.total) * 1000)));
      for (let i = 0; i < Math.max(1, n); i++) {
        const lat = r.latencies[i];
        console.log(
          `${n === 0 ? label : `${label}, replica ${i + 1}`}: CPU ${f((r.cpu[i] / r.total) * 1000)} ms per 1 000 messages (${r.total} messages of the fleet${r.applied[i] === undefined ? '' : `, ${r.applied[i]} applied here since start`}); probe publish-to-visible p50 ${f(pct(lat, 0.5))} ms, p99 ${f(pct(lat, 0.99))} ms, max ${f(pct(lat, 1))} ms (${lat.length} probes); ${r.loops[i]}`,
        );
      }
      if (n > 0) console.log(`${label}: Redis commands per 1 000 messages, all replicas together: ${f(r.redisCallsPer1000)}`);
      if (r.drain) {
        const d = r.drain;
        const cpus = d.cpu.map((c) => f((c / d.sent) * 1000)).join(', ');
        const late = d.fillMs > 3500 ? ': past the heartbeats, sessions may have been taken over' : '';
        console.log(
          `${label}: ${DRAIN_ROUNDS} bursts, ${d.sent} messages (each queued within ${d.fillMs} ms${late}) applied by every replica in ${d.elapsedMs} ms (${f(d.sent / (d.elapsedMs / 1000))} msg/s); CPU per 1 000 messages, each replica: ${cpus} ms`,
        );
        drained.set(name, Math.max(...d.cpu.map((c) => (c / d.sent) * 1000)));
      }
      if (r.catchUp) {
        const c = r.catchUp;
        console.log(
          `${label}: ${c.sent} messages appended to the stream read and applied by every replica in ${c.elapsedMs} ms; CPU per 1 000 messages, each replica: ${c.cpu.map((x) => f((x / c.sent) * 1000)).join(', ')} ms`,
        );
        caughtUp.set(name, Math.max(...c.cpu.map((x) => (x / c.sent) * 1000)));
      }
    }
    // What n replicas carry against one: the one's CPU per fleet message over the busiest of the n's (each has the same core).
    for (const [what, figures] of [
      ['under the load', busiest],
      ['at saturation (the burst)', drained],
      ['reading back and applying alone (the appended stream)', caughtUp],
    ] as const) {
      const one = figures.get('1');
      for (const [name, cpu] of figures) {
        const n = Number.parseInt(name, 10);
        if (n < 2) continue;
        const beside =
          one === undefined
            ? 'no one-replica run beside it (add 1 to LOOKOUT_BENCH_SCENARIOS)'
            : `one replica ${f(one)} ms: they carry ${f(one / cpu)}x what one does`;
        console.log(`capacity ${what}: ${name} busiest replica ${f(cpu)} ms CPU per 1 000 fleet messages; ${beside} (aim >= 1.8 with two)`);
      }
    }
    const baseline = p99s.get('0');
    for (const [n, p99] of p99s) {
      if (n === '0') continue;
      const beside =
        baseline === undefined
          ? 'no baseline in this run (add 0 to LOOKOUT_BENCH_SCENARIOS)'
          : `baseline one hub ${f(baseline)} ms, ratio ${f(p99 / baseline)}`;
      console.log(`summary: ${n} probe p99 ${f(p99)} ms (worst replica; aim <= 50 ms); ${beside}`);
    }
    if (!HOT_READ) return;
    // The hot read: a replica with Redis state beside one hub with its state in memory, the same fleet in each.
    const replica = await startHubProcess(['--mqtt', broker.url, '--state', redis.url, '--state-prefix', 'bench-read:'], join(dir, 'read-replica'), setFile);
    const single = await startHubProcess(['--mqtt', broker.url], join(dir, 'read-single'), setFile);
    const publisher = await mqttConnect(broker.url, 'bench-read-publisher');
    await announce(publisher);
    for (const id of ids) await pub(publisher, `devices/${id}/telemetry`, msg.telemetry());
    await until(async () => {
      const counts = await Promise.all(
        [replica, single].map(async (h) => (JSON.parse((await get(`${h.url}/fleet/mqtt/latest`)).body) as { count: number }).count),
      );
      return counts.every((n) => n === DEVICES + 1);
    }, 'both hubs to list the fleet');
    const a = await hotRead(single.url);
    const b = await hotRead(replica.url);
    const a2 = await hotRead(single.url);
    const b2 = await hotRead(replica.url);
    const mem = { p50: Math.min(a.p50, a2.p50), p99: Math.min(a.p99, a2.p99) };
    const red = { p50: Math.min(b.p50, b2.p50), p99: Math.min(b.p99, b2.p99) };
    console.log(`hot read GET /fleet/mqtt/latest (${DEVICES + 1} devices), state in memory (one hub): p50 ${f(mem.p50)} ms, p99 ${f(mem.p99)} ms`);
    console.log(`hot read GET /fleet/mqtt/latest (${DEVICES + 1} devices), replica with Redis state: p50 ${f(red.p50)} ms, p99 ${f(red.p99)} ms`);
    console.log(`ratio Redis replica / in memory: ${(red.p50 / mem.p50).toFixed(2)} (p50; aim <= 1.2)`);
    publisher.end(true);
    await stopHub(replica);
    await stopHub(single);
  } finally {
    agent.destroy();
    await broker.stop();
    await redis.stop();
  }
}

/** The simulated fleet's telemetry: every device RATE_HZ times a second for SECONDS, QoS 1; prints how many it sent. */
/**
 * The part of a replica's work that dividing the apply divides, alone: CATCH_UP telemetry messages
 * appended to the shared stream at once (packed as a replica packs them, no broker, no publisher),
 * and each replica's CPU until it has read and applied them all.
 */
async function catchUpStream(redisUrl: string, prefix: string, hubs: Hub[], appliedBefore: number) {
  const entries: Buffer[] = [];
  for (let n = 0; n < CATCH_UP;) {
    const batch: RelayedMessage[] = [];
    for (; batch.length < 500 && n < CATCH_UP; n++) {
      const id = ids[n % ids.length];
      batch.push({
        topic: `devices/${id}/telemetry`,
        payload: Buffer.from(JSON.stringify({ ...msg.telemetry(40 + (n % 10)), seq: 2_000_000 + n })),
        retain: false,
        at: Date.now(),
      });
    }
    entries.push(packMessages(batch));
  }
  const client = new Redis(redisUrl);
  try {
    const cpuBefore = hubs.map((h) => procStat(h.child.pid!).cpuMs);
    const started = Date.now();
    const pipeline = client.pipeline();
    entries.forEach((packed, i) => pipeline.xadd(`${prefix}ingest`, '*', 'b', packed, 'o', 'bench-catch-up', 'n', String(i + 1), 'l', '0'));
    await pipeline.exec();
    await until(async () => {
      const cfgs = await Promise.all(hubs.map(async (h) => JSON.parse((await get(`${h.url}/fleet/mqtt/config`)).body) as { ingest: { valid: number } }));
      return cfgs.every((c) => c.ingest.valid >= appliedBefore + CATCH_UP);
    }, 'every replica to apply the appended stream');
    return { sent: CATCH_UP, elapsedMs: Date.now() - started, cpu: hubs.map((h, i) => procStat(h.child.pid!).cpuMs - cpuBefore[i]) };
  } finally {
    client.disconnect();
  }
}

/** `count` telemetry messages over the devices, as fast as the broker takes them (QoS 1); prints how many it sent. */
async function burstPublisher(url: string, count: number, tag: string): Promise<void> {
  const c = await mqttConnect(url, `bench-burst-${tag}`);
  let sent = 0;
  for (let round = 0; sent < count; round++) {
    const batch = ids.slice(0, Math.min(ids.length, count - sent));
    await Promise.all(batch.map((id, k) => pub(c, `devices/${id}/telemetry`, { ...msg.telemetry(40 + (k % 10)), seq: 1_000_000 + round })));
    sent += batch.length;
  }
  process.stdout.write(`${JSON.stringify({ sent })}\n`);
  c.end(false, () => process.exit(0));
}

async function loadPublisher(url: string, seconds: number, rateHz: number, tag: string): Promise<void> {
  const c = await mqttConnect(url, `bench-load-${tag}`);
  let sent = 0;
  const started = Date.now();
  for (let tick = 0; Date.now() - started < seconds * 1000; tick++) {
    const t = Date.now();
    await Promise.all(ids.map((id, k) => pub(c, `devices/${id}/telemetry`, { ...msg.telemetry(40 + (k % 10)), seq: tick })));
    sent += ids.length;
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 / rateHz - (Date.now() - t))));
  }
  process.stdout.write(`${JSON.stringify({ sent })}\n`);
  c.end(false, () => process.exit(0));
}

if (process.argv[2] === '--load-publisher') await loadPublisher(process.argv[3], Number(process.argv[4]), Number(process.argv[5]), process.argv[6]);
else if (process.argv[2] === '--burst-publisher') await burstPublisher(process.argv[3], Number(process.argv[4]), process.argv[5]);
else await main();
