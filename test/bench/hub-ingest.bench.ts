/**
 * Hub ingest throughput. Spec-shaped dets messages at QoS 1 through a real mosquitto (its queue
 * and in-flight limits raised) are published for a while (LOOKOUT_BENCH_SECONDS, default 30) to
 * two subscribers held paused (SIGSTOP) meanwhile: the hub (`lookout-hub --mqtt`, which validates
 * every message against its wire contract and caches it) and, as the baseline, a bare MQTT.js
 * subscriber that only parses JSON. Each is then resumed alone and drains the same backlog: the
 * rate at which it takes every message, none lost, is the highest rate it can ingest. Rates are
 * taken between 10 % and 90 % of the backlog, so that resuming and warming up do not count. The
 * publishing time is split in rounds (LOOKOUT_BENCH_ROUNDS, default 5); the two drain one after the
 * other with a pause between (LOOKOUT_BENCH_GAP_MS, default 2000), in alternating order, and the
 * median of the rounds is reported: on a shared machine single drains vary by tens of percent, so
 * the CPU time each process spent per message (from /proc) is printed too, with its ratio.
 * Printed: both rates and their ratio (aim: hub / bare >= 0.7), and the CPU time per message of each
 * with their ratio (issue 31's aim: bare / hub >= 0.95, every check kept).
 *
 *   node dist/test/bench/hub-ingest.bench.js               (npm run bench -- hub-ingest)
 *   LOOKOUT_BENCH_SECONDS=10 LOOKOUT_BENCH_PUBLISH_RATE=20000 node dist/test/bench/hub-ingest.bench.js
 *   LOOKOUT_BENCH_BARE_MQTT5=1 …   (the bare subscriber on MQTT 5 with a subscription identifier, as the hub)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type MqttClient } from 'mqtt';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { startMosquitto } from '../support/mosquitto.js';

const DEVICES = 50;
/** The bare subscriber notes the time every this many messages. */
const MARK_EVERY = 1000;
const GAP_MS = Number(process.env.LOOKOUT_BENCH_GAP_MS ?? 2000);
/** LOOKOUT_BENCH_BARE_MQTT5=1: the bare subscriber speaks MQTT 5 with a subscription identifier, as the hub does (default 3.1.1). */
const MQTT5_BARE = process.env.LOOKOUT_BENCH_BARE_MQTT5 === '1';

/** Messages per second between 10 % and 90 % of `total`, from (time, count) samples. */
function middleRate(samples: { t: number; n: number }[], total: number): number {
  const at = (target: number): number => {
    const i = samples.findIndex((s) => s.n >= target);
    if (i <= 0) return samples[Math.max(0, i)].t;
    const a = samples[i - 1];
    const b = samples[i];
    return a.t + ((target - a.n) / (b.n - a.n)) * (b.t - a.t);
  };
  const lo = 0.1 * total;
  const hi = 0.9 * total;
  return (hi - lo) / ((at(hi) - at(lo)) / 1000);
}

/**
 * The baseline: subscribe, parse JSON, count distinct sequence numbers. Nothing else. Told on stdin
 * how many messages to expect in all, it reports each round when it has them.
 */
function bareSubscriber(url: string): void {
  const client = connect(url, {
    clientId: 'bench-bare-subscriber',
    clean: false,
    reconnectPeriod: 100,
    keepalive: 120,
    ...(MQTT5_BARE ? { protocolVersion: 5 as const, properties: { sessionExpiryInterval: 3600 } } : { protocolVersion: 4 as const }),
  });
  let seen = new Uint8Array(1 << 20);
  let distinct = 0;
  let expected = Infinity;
  let round = { count: 0, distinct: 0, first: 0, last: 0, marks: [] as number[] };
  const report = () => {
    if (distinct < expected) return;
    process.stdout.write(`${JSON.stringify({ event: 'done', ...round })}\n`);
    expected = Infinity;
    round = { count: 0, distinct: 0, first: 0, last: 0, marks: [] };
  };
  client.on('message', (_topic, payload) => {
    const m = JSON.parse(payload.toString('utf8')) as { seq: number };
    const now = Date.now();
    if (round.count++ === 0) round.first = now;
    round.last = now;
    if (m.seq >= seen.length) {
      const bigger = new Uint8Array(Math.max(seen.length * 2, m.seq + 1));
      bigger.set(seen);
      seen = bigger;
    }
    if (seen[m.seq] === 0) {
      seen[m.seq] = 1;
      distinct++;
      if (++round.distinct % MARK_EVERY === 0) round.marks.push(now);
    }
    report();
  });
  process.stdin.on('data', (d) => {
    expected = Number(d.toString().trim().split('\n').at(-1));
    report();
  });
  process.once('SIGTERM', () => process.exit(0)); // an exit a profiler writes its file on
  // Under MQTT 5 with a subscription identifier, as the hub's bus subscribes: each PUBLISH then carries it.
  const options = MQTT5_BARE ? { qos: 1 as const, properties: { subscriptionIdentifier: 1 } } : { qos: 1 as const };
  client.once('connect', () => client.subscribe('devices/+/dets', options, () => process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`)));
}

function lines(child: ChildProcess): AsyncGenerator<Record<string, unknown>> {
  let buffer = '';
  const queue: Record<string, unknown>[] = [];
  let wake: (() => void) | undefined;
  child.stdout!.on('data', (c: Buffer) => {
    buffer += c.toString();
    let i;
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      if (line.startsWith('{')) queue.push(JSON.parse(line) as Record<string, unknown>);
      wake?.();
    }
  });
  return (async function* () {
    for (;;) {
      while (queue.length) yield queue.shift()!;
      await new Promise<void>((r) => (wake = r));
    }
  })();
}

async function nextEvent(events: AsyncGenerator<Record<string, unknown>>, name: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${name} within ${timeoutMs} ms`)), timeoutMs).unref());
  for (;;) {
    const e = (await Promise.race([events.next(), timer])).value as Record<string, unknown>;
    if (e.event === name) return e;
  }
}

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

async function publishFor(client: MqttClient, seconds: number, rate: number, firstSeq: number): Promise<number> {
  const started = Date.now();
  let sent = 0;
  let inflight = 0;
  await new Promise<void>((resolve) => {
    const pump = () => {
      const elapsed = (Date.now() - started) / 1000;
      if (elapsed >= seconds) {
        if (inflight === 0) resolve();
        return;
      }
      const due = Math.min(Math.floor(elapsed * rate) + 200, Math.ceil(seconds * rate));
      while (sent < due && inflight < 1000) {
        const seq = firstSeq + sent++;
        inflight++;
        client.publish(`devices/bench-${seq % DEVICES}/dets`, detsMessage(seq, seq % DEVICES), { qos: 1 }, () => {
          inflight--;
          if (inflight < 500) setImmediate(pump);
        });
      }
      if (inflight === 0) setTimeout(pump, 5);
    };
    pump();
  });
  return sent;
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url);
  return res.json();
}

interface Drain {
  received: number;
  duplicates: number;
  rate: number;
  wholeRate: number;
  /** CPU time the subscriber's process spent on the drain, per message (µs). */
  cpuUs: number;
}

/**
 * CPU time (user + system) of a process so far, in ms, from /proc (clock ticks of 10 ms). On a
 * shared machine wall-clock rates swing with the neighbours' load; CPU time per message does not.
 */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}
const TICKS_PER_SECOND = 100;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const seconds = Number(process.env.LOOKOUT_BENCH_SECONDS ?? 30);
  const rate = Number(process.env.LOOKOUT_BENCH_PUBLISH_RATE ?? 10_000);
  const rounds = Math.max(1, Number(process.env.LOOKOUT_BENCH_ROUNDS ?? 5));
  const broker = await startMosquitto({ maxQueuedMessages: 10_000_000, maxInflightMessages: 1000, extraConfig: ['max_queued_bytes 0'] });
  const children: ChildProcess[] = [];
  const cleanup = () => children.forEach((c) => c.kill('SIGKILL'));
  process.once('exit', cleanup);
  try {
    // LOOKOUT_BENCH_HUB_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the hub's side.
    const nodeArgs = (process.env.LOOKOUT_BENCH_HUB_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const benchDir = mkdtempSync(join(tmpdir(), 'hub-bench-'));
    const registryFile = join(benchDir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify({ bus_id: 'bench', devices: Array.from({ length: DEVICES }, (_, i) => ({ device_id: `bench-${i}` })) }));
    const hubProc = spawn(
      process.execPath,
      [
        ...nodeArgs,
        join(packageRoot(), 'bin', 'lookout-hub.js'),
        '--port',
        '0',
        '--mqtt',
        broker.url,
        '--json',
        '--data-dir',
        benchDir,
        // The hub admits only devices it knows: the registry file names the bench's devices.
        '--registry',
        registryFile,
        '--ring-size',
        '2000',
      ],
      {
        env: { ...process.env, LOOKOUT_LOG_LEVEL: 'error' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    // LOOKOUT_BENCH_BARE_NODE_ARGS: the same for the bare subscriber, to compare the two profiles.
    const bareArgs = (process.env.LOOKOUT_BENCH_BARE_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const bareProc = spawn(process.execPath, [...bareArgs, fileURLToPath(import.meta.url), '--bare-subscriber', broker.url], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.push(hubProc, bareProc);
    const hubEvents = lines(hubProc);
    const bareEvents = lines(bareProc);
    const ready = await nextEvent(hubEvents, 'ready', 20_000);
    const hubUrl = String(ready.url);
    await nextEvent(bareEvents, 'ready', 10_000);
    const publisher = connect(broker.url, { protocolVersion: 4, clientId: 'bench-publisher' });
    await new Promise((r) => publisher.once('connect', r));
    console.log(
      `${rounds} round(s) of ${(seconds / rounds).toFixed(1)} s publishing (${seconds} s in all) at up to ${rate} msg/s; ${detsMessage(0, 0).length}-byte dets messages from ${DEVICES} devices, QoS 1, mosquitto max_queued_messages 10000000`,
    );

    const drainBare = async (expectedInAll: number, roundTotal: number): Promise<Drain> => {
      bareProc.stdin.write(`${expectedInAll}\n`);
      const started = Date.now();
      const cpu0 = cpuMs(bareProc.pid!);
      process.kill(bareProc.pid!, 'SIGCONT');
      const r = (await nextEvent(bareEvents, 'done', 600_000)) as { count: number; distinct: number; first: number; last: number; marks: number[] };
      const samples = [{ t: r.first, n: 1 }, ...r.marks.map((t, i) => ({ t, n: (i + 1) * MARK_EVERY })), { t: r.last, n: r.distinct }];
      const cpuUs = ((cpuMs(bareProc.pid!) - cpu0) * 1000) / r.distinct;
      return {
        received: r.distinct,
        duplicates: r.count - r.distinct,
        rate: middleRate(samples, roundTotal),
        wholeRate: r.distinct / ((r.last - started) / 1000),
        cpuUs,
      };
    };
    const drainHub = async (validBefore: number, roundTotal: number): Promise<Drain> => {
      const started = Date.now();
      const cpu0 = cpuMs(hubProc.pid!);
      process.kill(hubProc.pid!, 'SIGCONT');
      const samples: { t: number; n: number }[] = [];
      let ingest: { valid: number; last_message_at: string } | undefined;
      const deadline = Date.now() + 600_000;
      for (;;) {
        try {
          ingest = (await getJson(`${hubUrl}/fleet/mqtt/config`)).ingest;
          samples.push({ t: Date.now(), n: ingest!.valid - validBefore });
          if (ingest!.valid - validBefore >= roundTotal) break;
        } catch {
          // resuming: the HTTP socket may not answer for a moment
        }
        if (Date.now() > deadline) break;
        // Coarse polling keeps the measuring off the hub's back; the rate is interpolated between polls.
        await new Promise((r) => setTimeout(r, 100));
      }
      const received = (ingest?.valid ?? 0) - validBefore;
      samples[samples.length - 1] = { t: Date.parse(ingest!.last_message_at), n: received };
      const cpuUs = ((cpuMs(hubProc.pid!) - cpu0) * 1000) / received;
      return {
        received,
        duplicates: 0,
        rate: middleRate(samples, roundTotal),
        wholeRate: received / ((Date.parse(ingest!.last_message_at) - started) / 1000),
        cpuUs,
      };
    };

    let published = 0;
    const ratios: number[] = [];
    const bareRates: number[] = [];
    const hubRates: number[] = [];
    const cpuRatios: number[] = [];
    const bareCpu: number[] = [];
    const hubCpu: number[] = [];
    let lost = 0;
    for (let round = 0; round < rounds; round++) {
      const before = (await getJson(`${hubUrl}/fleet/mqtt/config`)).ingest as { valid: number; invalid: number };
      process.kill(hubProc.pid!, 'SIGSTOP');
      process.kill(bareProc.pid!, 'SIGSTOP');
      const t0 = Date.now();
      const total = await publishFor(publisher, seconds / rounds, rate, published);
      published += total;
      const pubSeconds = (Date.now() - t0) / 1000;
      // Each drains alone; the order alternates so that going first or second favours neither.
      const bareFirst = round % 2 === 0;
      const first = bareFirst ? await drainBare(published, total) : await drainHub(before.valid, total);
      await new Promise((r) => setTimeout(r, GAP_MS));
      const second = bareFirst ? await drainHub(before.valid, total) : await drainBare(published, total);
      const [bare, hub] = bareFirst ? [first, second] : [second, first];
      const after = (await getJson(`${hubUrl}/fleet/mqtt/config`)).ingest as { valid: number; invalid: number };
      lost += total - bare.received + (total - hub.received);
      ratios.push(hub.rate / bare.rate);
      bareRates.push(bare.rate);
      hubRates.push(hub.rate);
      cpuRatios.push(bare.cpuUs / hub.cpuUs);
      bareCpu.push(bare.cpuUs);
      hubCpu.push(hub.cpuUs);
      console.log(
        `round ${round + 1}: ${total} published in ${pubSeconds.toFixed(1)} s; ${bareFirst ? 'bare first' : 'hub first'}; ` +
          `bare ${bare.received}/${total} (${bare.duplicates} dup) ${Math.round(bare.rate)} msg/s; ` +
          `hub ${hub.received}/${total} valid, ${after.invalid - before.invalid} invalid, ${Math.round(hub.rate)} msg/s; ratio ${(hub.rate / bare.rate).toFixed(2)}; ` +
          `CPU per message bare ${bare.cpuUs.toFixed(1)} µs, hub ${hub.cpuUs.toFixed(1)} µs`,
      );
    }
    await new Promise((r) => publisher.end(false, {}, r));
    const latest = await getJson(`${hubUrl}/fleet/mqtt/latest`);
    console.log(
      `bare MQTT.js subscriber (JSON.parse only, MQTT ${MQTT5_BARE ? '5 with a subscription identifier' : '3.1.1'}): median ${Math.round(median(bareRates))} msg/s`,
    );
    console.log(`hub (wire-contract validation, cache of ${latest.count} devices, ring, metrics): median ${Math.round(median(hubRates))} msg/s`);
    console.log(`messages lost: ${lost} of ${published * 2}`);
    console.log(`ratio hub / bare: median ${median(ratios).toFixed(2)} (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')}; aim >= 0.7)`);
    console.log(
      `CPU per message: bare median ${median(bareCpu).toFixed(1)} µs, hub median ${median(hubCpu).toFixed(1)} µs; ` +
        `capacity ratio from CPU time (bare / hub): median ${median(cpuRatios).toFixed(2)} (rounds: ${cpuRatios.map((r) => r.toFixed(2)).join(', ')}; aim >= 0.95)`,
    );
    // A clean stop, so that a profiler given through LOOKOUT_BENCH_HUB_NODE_ARGS writes its file.
    for (const child of [hubProc, bareProc]) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  } finally {
    cleanup();
    await broker.stop();
  }
}

if (process.argv[2] === '--bare-subscriber') bareSubscriber(process.argv[3]);
else await main();
