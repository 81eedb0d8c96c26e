/**
 * The replicas' soak (issue 31 item 4): two `lookout-hub --mqtt --state redis://…` replicas (real
 * processes) on a real mosquitto and redis-server, behind a real nginx running the shipped
 * deploy/replicas/nginx.conf (only its upstream servers and listen line replaced, test/support/nginx.ts),
 * under a fleet that announces itself as real devices do (fleet-devices.ts: hello, status, then dets
 * and telemetry, QoS 1, from LOOKOUT_BENCH_WORKERS child processes) for LOOKOUT_BENCH_SOAK_S seconds.
 * Every LOOKOUT_BENCH_KILL_EVERY_S one replica is SIGKILLed, the two in turn, and started again at
 * once on the same port and data dir, as a supervisor would: the time until it answers again (its
 * ready line) and until its own latest cache shows the probe published then (caught up) is printed.
 *
 * A probe device publishes a telemetry every LOOKOUT_BENCH_PROBE_MS (200) and a poller asks nginx
 * `GET /fleet/mqtt/latest?device=probe` every 5 ms until it shows: publish→visible latency (a probe
 * overtaken between two polls counts from when the later one showed). Beside it, in the same run, a
 * bare subscriber on the probe's topic (broker alone); and the first window has no kill: it is the
 * replicas' own baseline.
 *
 * Lost: an auditor (this file with `--audit`, a process of its own) reads the replicas' shared
 * ingest stream in Redis (`<prefix>ingest`, the stream every replica applies) as it grows and notes
 * every device's dets and telemetry sequence numbers; at the end each one the broker acknowledged
 * to a device must be in it, and the hub's view through nginx and on each replica must hold every
 * device's last acknowledged telemetry. Per window (window = the kill interval): probe p50/p99/max,
 * requests nginx did not answer 200, messages published (acknowledged by the broker) and arrived
 * (new in the stream), each replica's RSS (/proc) and heap (its /metrics) at the window's end and
 * their maximum over it (sampled every LOOKOUT_BENCH_SAMPLE_S), kills and times to serve again; then
 * lost in all and the RSS trend (first window against the last, per replica).
 *
 *   node dist/test/bench/replicas-soak.bench.js                    (npm run bench -- replicas-soak: one hour)
 *   LOOKOUT_BENCH_SOAK_S=180 LOOKOUT_BENCH_KILL_EVERY_S=60 LOOKOUT_BENCH_DEVICES=200 LOOKOUT_BENCH_RATE_HZ=4 \
 *     node dist/test/bench/replicas-soak.bench.js                  (three minutes, two kills)
 * Knobs: LOOKOUT_BENCH_DEVICES (1000), LOOKOUT_BENCH_RATE_HZ (20: messages a second per device, dets
 * and telemetry half each), LOOKOUT_BENCH_SOAK_S (3600), LOOKOUT_BENCH_KILL_EVERY_S (600),
 * LOOKOUT_BENCH_WORKERS (2), LOOKOUT_BENCH_PROBE_MS (200), LOOKOUT_BENCH_HELLO_SPREAD_MS (2000),
 * LOOKOUT_BENCH_SAMPLE_S (5), LOOKOUT_BENCH_MIRROR_MS (the replicas' --mirror-interval-ms; unset: the
 * hub's default, 1000 ms, the replicas dividing the apply, so each kill moves the killed replica's
 * devices to the other and back; 0: each applies every message).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { unpackMessages } from '../../hub/src/state/ingest-batch.js';
import { msg, TEST_FLEET_SECRET } from '../support/hub-helpers.js';
import { startHubReplica, stopReplicas, writeReplicaPluginSet, type HubReplica } from '../support/hub-replica.js';
import { startMosquitto } from '../support/mosquitto.js';
import { startNginx } from '../support/nginx.js';
import { startRedis } from '../support/redis.js';
import { hello, mqttConnect, pub, spawnDeviceWorker, type DeviceWorker, type LastAcked } from './fleet-devices.js';
import { hubMetric, pct, procStat } from './process-figures.js';

const DEVICES = Number(process.env.LOOKOUT_BENCH_DEVICES ?? 1000);
/** Messages a second per device: dets and telemetry at half of it each (the issue's 1 000 × 20 msg/s). */
const RATE_HZ = Number(process.env.LOOKOUT_BENCH_RATE_HZ ?? 20);
const SOAK_S = Number(process.env.LOOKOUT_BENCH_SOAK_S ?? 3600);
const KILL_EVERY_S = Number(process.env.LOOKOUT_BENCH_KILL_EVERY_S ?? 600);
const WORKERS = Number(process.env.LOOKOUT_BENCH_WORKERS ?? 2);
const PROBE_MS = Number(process.env.LOOKOUT_BENCH_PROBE_MS ?? 200);
const HELLO_SPREAD_MS = Number(process.env.LOOKOUT_BENCH_HELLO_SPREAD_MS ?? 2000);
const SAMPLE_S = Number(process.env.LOOKOUT_BENCH_SAMPLE_S ?? 5);
/** The replicas' --mirror-interval-ms (how they divide the apply); unset: the hub's default. */
const MIRROR_MS = process.env.LOOKOUT_BENCH_MIRROR_MS;
const PREFIX = 'soak:';
/** A probe slower than this is listed with its window, and the time its stream entry was written. */
const SLOW_MS = 100;
const MiB = 2 ** 20;

const agent = new Agent({ keepAlive: true, maxSockets: 4 });
const f = (n: number, digits = 1) => n.toFixed(digits);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() > deadline) {
      console.log(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
      return false;
    }
    await sleep(250);
  }
}

type LatestBody = { devices: Record<string, { payload?: { seq?: number } | null } | undefined> };

interface Memory {
  rss: number;
  heap: number;
  /** The replica process's age at the sample (s): a restarted one starts again. */
  upS?: number;
}

interface Window {
  index: number;
  from: number;
  to: number;
  hub: number[];
  broker: number[];
  /** Requests through nginx answered otherwise than 200 (status or error). */
  failures: Map<string, number>;
  requests: number;
  published: number;
  arrived: number;
  kills: string[];
  /** The slow probes' stream entry times (ms), looked up at the window's close (the stream trims its past). */
  streamAt: Map<number, number>;
  /** Per replica: memory at the window's end and the most over it; its CPU over the window. */
  last: Memory[];
  max: Memory[];
  cpuMs: number[];
}

/** A replica slot: the process now in it, and what restarts it in place. */
interface Slot {
  name: string;
  port: number;
  replica: HubReplica;
  startedAt: number;
  restarts: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'replicas-soak-'));
  process.env.LOOKOUT_HUB_MAX_DEVICES = String(Math.max(20_000, DEVICES + 10));
  const [broker, redis] = await Promise.all([
    startMosquitto({ maxQueuedMessages: 1_000_000, maxInflightMessages: 1000, extraConfig: ['max_connections -1'] }),
    startRedis(),
  ]);
  /** For the slow probes' stream times. */
  const inspect = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  const children: ChildProcess[] = [];
  const slots: Slot[] = [];
  let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
  try {
    const pluginSet = writeReplicaPluginSet(dir, 'replicas-soak');
    const start = (name: string, port = 0) =>
      startHubReplica({
        name,
        port,
        brokerUrl: broker.url,
        stateUrl: redis.url,
        statePrefix: PREFIX,
        mqttGroup: 'replicas-soak',
        dataDir: join(dir, name),
        pluginSet,
        fleetSecret: TEST_FLEET_SECRET,
        ...(MIRROR_MS !== undefined ? { extraArgs: ['--mirror-interval-ms', MIRROR_MS] } : {}),
      });
    for (const r of await Promise.all([start('a'), start('b')]))
      slots.push({ name: r.name, port: Number(new URL(r.url).port), replica: r, startedAt: Date.now(), restarts: 0 });
    nginx = await startNginx({ upstreams: slots.map((s) => s.replica.url) });
    const viaNginx = `${nginx.url}/fleet/mqtt/latest?device=probe`;

    // The auditor reads the shared ingest stream from its start.
    const auditor = spawn(process.execPath, [fileURLToPath(import.meta.url), '--audit', redis.url, `${PREFIX}ingest`], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(auditor);
    let arrived = 0;
    let report: ((r: AuditReport) => void) | undefined;
    await new Promise<void>((resolve) =>
      createInterface({ input: auditor.stdout }).on('line', (line) => {
        const m = JSON.parse(line) as { event: string; distinct?: number } & AuditReport;
        if (m.event === 'ready') resolve();
        if (m.event === 'progress') arrived = m.distinct!;
        if (m.event === 'report') {
          arrived = m.distinct!;
          report?.(m);
        }
      }),
    );
    const audit = (expect: LastAcked) =>
      new Promise<AuditReport>((resolve) => {
        report = resolve;
        auditor.stdin.write(`${JSON.stringify(expect)}\n`);
      });

    // The probe says hello like any device, before the fleet; a bare subscriber beside it times the broker alone.
    const probe = await mqttConnect(broker.url, 'probe');
    await pub(probe, 'devices/probe/hello', hello('probe'));
    await pub(probe, 'devices/probe/status', msg.status('probe'), true);
    const bare = await mqttConnect(broker.url, 'soak-bare');
    const brokerAt = new Map<number, number>();
    bare.on('message', (_topic, payload) => brokerAt.set((JSON.parse(payload.toString()) as { seq: number }).seq, Date.now()));
    await new Promise<void>((resolve, reject) => bare.subscribe('devices/probe/telemetry', { qos: 1 }, (err) => (err ? reject(err) : resolve())));
    await until(async () => (JSON.parse((await get(viaNginx)).body) as LatestBody).devices.probe !== undefined, 'the probe through nginx', 60_000);

    let probeSeq = 0;
    let probeAcked = 0;
    const startAt = Date.now() + 500;
    const endAt = startAt + SOAK_S * 1000;
    const perWorker = Math.ceil(DEVICES / WORKERS);
    const workers: DeviceWorker[] = [];
    for (let w = 0; w < WORKERS; w++) {
      const from = w * perWorker;
      const to = Math.min(DEVICES, from + perWorker);
      if (from >= to) break;
      workers.push(spawnDeviceWorker({ url: broker.url, from, to, startAt, seconds: SOAK_S, rateHz: RATE_HZ / 2, spreadMs: HELLO_SPREAD_MS, progressMs: 250 }));
      children.push(workers.at(-1)!.child);
    }
    /** Dets and telemetry the broker acknowledged (the probe's included): what the auditor looks for. */
    const published = () => workers.reduce((n, w) => n + w.numbered, 0) + probeAcked;

    // Windows, one per kill interval; a kill opens each but the first.
    const windows: Window[] = [];
    for (let k = 0; startAt + k * KILL_EVERY_S * 1000 < endAt; k++) {
      windows.push({
        index: k,
        from: startAt + k * KILL_EVERY_S * 1000,
        to: Math.min(endAt, startAt + (k + 1) * KILL_EVERY_S * 1000),
        hub: [],
        broker: [],
        failures: new Map(),
        requests: 0,
        published: 0,
        arrived: 0,
        kills: [],
        streamAt: new Map(),
        last: slots.map(() => ({ rss: NaN, heap: NaN })),
        max: slots.map(() => ({ rss: 0, heap: 0 })),
        cpuMs: slots.map(() => 0),
      });
    }
    const windowAt = (t: number) => windows.find((w) => t >= w.from && t < w.to) ?? windows.at(-1)!;

    // The probe and its poller through nginx.
    const probeAt = new Map<number, number>();
    const hubAt = new Map<number, number>();
    let polling = true;
    const probes: Promise<void>[] = [];
    const poller = (async () => {
      let seen = 0;
      while (polling) {
        const w = windowAt(Date.now());
        w.requests++;
        try {
          const r = await get(viaNginx);
          if (r.status !== 200) w.failures.set(String(r.status), (w.failures.get(String(r.status)) ?? 0) + 1);
          else {
            const s = (JSON.parse(r.body) as LatestBody).devices.probe?.payload?.seq ?? 0;
            if (s > seen) {
              const now = Date.now();
              for (let k = seen + 1; k <= s; k++) hubAt.set(k, now);
              seen = s;
            }
          }
        } catch (err) {
          const what = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
          w.failures.set(what, (w.failures.get(what) ?? 0) + 1);
        }
        await sleep(5);
      }
    })();
    await sleep(Math.max(0, startAt - Date.now()));
    const probeTimer = setInterval(() => {
      const s = ++probeSeq;
      probeAt.set(s, Date.now());
      probes.push(pub(probe, 'devices/probe/telemetry', { ...msg.telemetry(), seq: s }).then(() => void (probeAcked = Math.max(probeAcked, s))));
    }, PROBE_MS);

    // Memory and CPU samples; each replica's /metrics read directly (not through nginx).
    let sampling = true;
    let cpuBase = slots.map((s) => procStat(s.replica.child.pid!).cpuMs);
    const sample = async (w: Window) => {
      await Promise.all(
        slots.map(async (s, i) => {
          const rss = procStat(s.replica.child.pid!).rssBytes;
          const heap = await get(`${s.replica.url}/metrics`)
            .then((r) => hubMetric(r.body, 'nodejs_heap_size_used_bytes'))
            .catch(() => NaN);
          w.last[i] = { rss, heap, upS: (Date.now() - s.startedAt) / 1000 };
          if (rss > w.max[i].rss) w.max[i].rss = rss;
          if (heap > w.max[i].heap) w.max[i].heap = heap;
        }),
      );
    };
    const sampler = (async () => {
      while (sampling) {
        await sleep(SAMPLE_S * 1000);
        if (sampling) await sample(windowAt(Date.now()));
      }
    })();

    // The kills: at each window's start but the first, the replicas in turn.
    const serveAgain: { window: number; name: string; readyMs: number; caughtUpMs: number }[] = [];
    let countedPublished = 0;
    let countedArrived = 0;
    for (const w of windows) {
      await sleep(Math.max(0, w.to - Date.now()));
      // The window's close: its counts, a last memory sample (before the kill that opens the next).
      await sample(w);
      w.streamAt = await probeStreamTimes(
        inspect,
        [...probeAt]
          .filter(([s, at]) => windowAt(at) === w && hubAt.has(s) && hubAt.get(s)! - at > SLOW_MS)
          .map(([s, at]) => ({ seq: s, at, shownAt: hubAt.get(s)! })),
      );
      w.published = published() - countedPublished;
      w.arrived = arrived - countedArrived;
      countedPublished += w.published;
      countedArrived += w.arrived;
      w.cpuMs = slots.map((s, i) => procStat(s.replica.child.pid!).cpuMs - cpuBase[i]);
      const next = windows[w.index + 1];
      if (next) {
        const slot = slots[w.index % slots.length];
        const killedAt = Date.now();
        slot.replica.child.kill('SIGKILL');
        await new Promise((resolve) =>
          slot.replica.child.exitCode !== null || slot.replica.child.signalCode !== null ? resolve(undefined) : slot.replica.child.once('exit', resolve),
        );
        // A supervisor starts it again at once, on the same port and data dir.
        // One that does not come back within two minutes ends the run, saying so (its stderr is in the error).
        let gaveUp: NodeJS.Timeout | undefined;
        slot.replica = await Promise.race([
          start(slot.name, slot.port),
          new Promise<never>(
            (_, reject) => (gaveUp = setTimeout(() => reject(new Error(`replica ${slot.name} did not come back within 120 s of its SIGKILL`)), 120_000)),
          ),
        ]).finally(() => clearTimeout(gaveUp));
        slot.startedAt = Date.now();
        slot.restarts++;
        const readyMs = Date.now() - killedAt;
        const want = probeSeq;
        let caughtUpMs = NaN;
        if (
          await until(
            async () =>
              ((JSON.parse((await get(`${slot.replica.url}/fleet/mqtt/latest?device=probe`)).body) as LatestBody).devices.probe?.payload?.seq ?? 0) >= want,
            `replica ${slot.name} to catch up`,
            120_000,
          )
        )
          caughtUpMs = Date.now() - killedAt;
        serveAgain.push({ window: next.index, name: slot.name, readyMs, caughtUpMs });
        next.kills.push(
          `SIGKILL ${slot.name} at ${f((killedAt - startAt) / 1000, 1)} s: answering again after ${f(readyMs / 1000, 2)} s, caught up after ${f(caughtUpMs / 1000, 2)} s`,
        );
      }
      cpuBase = slots.map((s) => procStat(s.replica.child.pid!).cpuMs);
    }
    sampling = false;
    await sampler;

    // The end: every worker done (each publish acknowledged), then the hub's view and the stream checked.
    const results = await Promise.all(workers.map((w) => w.done));
    clearInterval(probeTimer);
    await Promise.all(probes);
    const last: LastAcked = Object.assign({}, ...results.map((r) => r.last)) as LastAcked;
    last.probe = { dets: 0, telemetry: probeAcked };
    const failedPublishes = results.reduce((n, r) => n + r.failed, 0);
    const ids = Object.keys(last);
    const behind = async (url: string) => {
      const body = JSON.parse((await get(`${url}/fleet/mqtt/latest`)).body) as LatestBody;
      return ids.filter((id) => (body.devices[id]?.payload?.seq ?? 0) !== last[id].telemetry);
    };
    const settleStarted = Date.now();
    await until(async () => (await behind(nginx!.url)).length === 0, "every device's last telemetry through nginx", 120_000);
    for (const s of slots) await until(async () => (await behind(s.replica.url)).length === 0, `every device's last telemetry on replica ${s.name}`, 60_000);
    let audited = await audit(last);
    const auditDeadline = Date.now() + 60_000;
    while (audited.missing > 0 && Date.now() < auditDeadline) {
      await sleep(1000);
      audited = await audit(last);
    }
    const settleS = (Date.now() - settleStarted) / 1000;
    // What came after the last window's close (the workers' last acknowledgements, the stream's tail) is the last window's.
    windows.at(-1)!.published += published() - countedPublished;
    windows.at(-1)!.arrived += arrived - countedArrived;
    polling = false;
    await poller;

    // Probe latencies into their windows.
    for (const [s, at] of probeAt) {
      const w = windowAt(at);
      const h = hubAt.get(s);
      const b = brokerAt.get(s);
      if (h !== undefined) w.hub.push(h - at);
      if (b !== undefined) w.broker.push(b - at);
    }
    const total = windows.reduce((n, w) => n + w.published, 0);
    console.log(
      `load: ${DEVICES} devices (${WORKERS} processes) × ${RATE_HZ} msg/s (dets + telemetry at ${RATE_HZ / 2} Hz each, QoS 1) = ${DEVICES * RATE_HZ} msg/s for ${SOAK_S} s, ` +
        `hellos within ${HELLO_SPREAD_MS} ms; probe every ${PROBE_MS} ms, polled through nginx (shipped deploy/replicas/nginx.conf) every 5 ms; ` +
        `two replicas on mosquitto + redis-server${MIRROR_MS === '0' ? ' each applying every message (--mirror-interval-ms 0)' : ` dividing the apply (--mirror-interval-ms ${MIRROR_MS ?? 'default'})`}, one SIGKILLed every ${KILL_EVERY_S} s (in turn) and restarted at once`,
    );
    for (const w of windows) {
      const failures = [...w.failures].map(([k, n]) => `${k} ×${n}`).join(', ') || 'none';
      console.log(
        `window ${w.index + 1} (${f((w.from - startAt) / 1000, 0)}–${f((w.to - startAt) / 1000, 0)} s)${w.index === 0 ? ' [baseline: no kill yet; it holds the fleet’s hellos]' : ''}: ` +
          `probe publish→visible through nginx p50 ${f(pct(w.hub, 0.5))} ms, p99 ${f(pct(w.hub, 0.99))} ms, max ${f(pct(w.hub, 1))} ms (${w.hub.length} probes); ` +
          `broker alone p50 ${f(pct(w.broker, 0.5))} ms, p99 ${f(pct(w.broker, 0.99))} ms; requests through nginx ${w.requests}, not 200: ${failures}; ` +
          `messages published ${w.published}, arrived in the stream ${w.arrived}`,
      );
      slots.forEach((s, i) =>
        console.log(
          `  replica ${s.name} (process up ${f(w.last[i].upS ?? NaN, 0)} s): RSS ${f(w.last[i].rss / MiB)} MiB (max ${f(w.max[i].rss / MiB)}), heap used ${f(w.last[i].heap / MiB)} MiB (max ${f(w.max[i].heap / MiB)}), ` +
            `CPU ${f(w.cpuMs[i] / 1000)} s (${f((w.cpuMs[i] / 1000 / ((w.to - w.from) / 1000)) * 100)} % of a core) at the window's end`,
        ),
      );
      for (const k of w.kills) console.log(`  ${k}`);
      // Where the tail is: the slow probes, by when they were published (the kill opens the window).
      // With its time in the stream (the entry's id): before it, the broker and the replica that took it; after, the read and apply.
      const slow = [...probeAt]
        .filter(([s, at]) => windowAt(at) === w && (hubAt.get(s) ?? Infinity) - at > SLOW_MS)
        .map(([s, at]) => {
          const streamed = w.streamAt.get(s);
          return `${f((at - w.from) / 1000, 1)} s: ${hubAt.has(s) ? `${hubAt.get(s)! - at} ms` : 'never'}${streamed === undefined ? '' : ` (in the stream after ${streamed - at} ms)`}`;
        });
      if (slow.length > 0)
        console.log(
          `  probes over ${SLOW_MS} ms (published at, into the window): ${slow.slice(0, 20).join(', ')}${slow.length > 20 ? ` … (${slow.length})` : ''}`,
        );
    }
    const notShown = [...probeAt.keys()].filter((s) => !hubAt.has(s)).length;
    console.log(
      `lost: ${audited.missing} of ${audited.expected} dets and telemetry the broker acknowledged are not in the replicas' ingest stream` +
        (audited.missing > 0 ? ` (e.g. ${audited.sample.join(', ')})` : '') +
        `; the hub's view: every device's last telemetry through nginx and on each replica: ` +
        `${(await behind(nginx.url)).length} devices behind through nginx, ${(await Promise.all(slots.map((s) => behind(s.replica.url)))).map((b, i) => `${b.length} on ${slots[i].name}`).join(', ')}; ` +
        `probes never shown ${notShown} of ${probeSeq}; publishes that failed at the device ${failedPublishes}; ${total} messages published in all, settled ${f(settleS)} s after the load`,
    );
    const times = serveAgain.map((s) => `${s.name} ${f(s.readyMs / 1000, 2)}/${f(s.caughtUpMs / 1000, 2)} s`).join(', ');
    console.log(`kills: ${serveAgain.length}, answering again / caught up after: ${times || 'none'}`);
    const first = windows[0];
    const lastW = windows.at(-1)!;
    console.log(
      `RSS trend (end of window 1 → end of window ${lastW.index + 1}): ` +
        slots
          .map(
            (s, i) =>
              `replica ${s.name} ${f(first.last[i].rss / MiB)} → ${f(lastW.last[i].rss / MiB)} MiB, heap ${f(first.last[i].heap / MiB)} → ${f(lastW.last[i].heap / MiB)} MiB ` +
              `(process up ${f(first.last[i].upS ?? NaN, 0)} s → ${f(lastW.last[i].upS ?? NaN, 0)} s; restarted ${s.restarts}×)`,
          )
          .join('; '),
    );
    probe.end(true);
    bare.end(true);
  } finally {
    agent.destroy();
    for (const c of children.reverse()) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGTERM');
      await exited;
    }
    await nginx?.stop();
    await stopReplicas(slots.map((s) => s.replica)).catch((err: unknown) => console.error(String(err)));
    inspect.disconnect();
    await broker.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * When each slow probe's telemetry was written to the shared stream (its entry id, Redis's clock on
 * this host): the entries between its publishing and its showing, unpacked. Absent when trimmed.
 */
async function probeStreamTimes(client: Redis, probes: { seq: number; at: number; shownAt: number }[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const p of probes) {
    const entries = await client.xrangeBuffer(`${PREFIX}ingest`, String(p.at - 50), String(p.shownAt + 50));
    for (const [id, fields] of entries) {
      const b = fields.findIndex((x) => x.toString() === 'b');
      if (b < 0) continue;
      const probe = unpackMessages(fields[b + 1]).find(
        (m) => m.topic === 'devices/probe/telemetry' && (JSON.parse(m.payload.toString()) as { seq?: number }).seq === p.seq,
      );
      if (probe) out.set(p.seq, Number(id.toString().split('-')[0]));
    }
  }
  return out;
}

interface AuditReport {
  /** Acknowledged messages (1 … last per device and topic) looked for, and those not found. */
  expected: number;
  missing: number;
  sample: string[];
}

/**
 * The auditor: reads the stream from its start as it grows, and notes per device and topic which
 * sequence numbers it holds (a bit each). It prints `progress` (distinct messages so far) each
 * second; for each JSON line on stdin (LastAcked) it prints a `report` of what is missing.
 */
async function auditStream(url: string, key: string): Promise<void> {
  const client = new Redis(url);
  const seen = new Map<string, Uint8Array>();
  let distinct = 0;
  let cursor = '0-0';
  const mark = (k: string, n: number) => {
    let bits = seen.get(k);
    if (!bits || bits.length <= n >> 3) {
      const grown = new Uint8Array(Math.max(64, ((n >> 3) + 1) * 2));
      if (bits) grown.set(bits);
      seen.set(k, (bits = grown));
    }
    const mask = 1 << (n & 7);
    if ((bits[n >> 3] & mask) === 0) {
      bits[n >> 3] |= mask;
      distinct++;
    }
  };
  const has = (k: string, n: number) => ((seen.get(k)?.[n >> 3] ?? 0) & (1 << (n & 7))) !== 0;
  setInterval(() => process.stdout.write(`${JSON.stringify({ event: 'progress', distinct, cursor })}\n`), 1000);
  createInterface({ input: process.stdin }).on('line', (line) => {
    const expect = JSON.parse(line) as LastAcked;
    let expected = 0;
    let missing = 0;
    const sample: string[] = [];
    for (const [id, last] of Object.entries(expect)) {
      for (const topic of ['dets', 'telemetry'] as const) {
        for (let n = 1; n <= last[topic]; n++) {
          expected++;
          if (!has(`${id}/${topic}`, n)) {
            missing++;
            if (sample.length < 10) sample.push(`${id} ${topic} ${n}`);
          }
        }
      }
    }
    process.stdout.write(`${JSON.stringify({ event: 'report', expected, missing, sample, distinct })}\n`);
  });
  process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`);
  const numbered = /^devices\/([^/]+)\/(dets|telemetry)$/;
  for (;;) {
    const res = await client.xreadBuffer('COUNT', 500, 'BLOCK', 1000, 'STREAMS', key, cursor);
    for (const [, entries] of res ?? []) {
      for (const [id, fields] of entries) {
        cursor = id.toString();
        for (let i = 0; i < fields.length; i += 2) {
          if (fields[i].toString() !== 'b') continue;
          for (const m of unpackMessages(fields[i + 1])) {
            const t = numbered.exec(m.topic);
            if (!t) continue;
            const seq = (JSON.parse(m.payload.toString('utf8')) as { seq?: unknown }).seq;
            if (typeof seq === 'number') mark(`${t[1]}/${t[2]}`, seq);
          }
        }
      }
    }
  }
}

if (process.argv[2] === '--audit') await auditStream(process.argv[3], process.argv[4]);
else await main();
