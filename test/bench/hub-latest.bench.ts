/**
 * `GET /fleet/mqtt/latest` latency with 1 000 devices in the cache (hello, status, telemetry,
 * dets and health each), over real HTTP on loopback with keep-alive. Baselines measured in the
 * same run: `GET /health` on the same hub (the cost of a route at all), JSON.stringify of the
 * very answer in process (the least any server must spend to make it), and a bare node:http server
 * answering the same bytes already made (the least any server must spend to send it: the transfer
 * floor, client included).
 *
 *   node dist/test/bench/hub-latest.bench.js     (npm run bench -- hub-latest)
 *   LOOKOUT_BENCH_DEVICES=5000 LOOKOUT_BENCH_REQUESTS=100 node dist/test/bench/hub-latest.bench.js
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryBus } from '../../core/src/bus/memory-bus.js';
import { createLogger } from '../../core/src/log/logger.js';
import { startHub } from '../../hub/src/start-hub.js';
import { MemoryStateStore } from '../../hub/src/state/memory-state-store.js';
import { msg } from '../support/hub-helpers.js';
import { Ingest } from '../../hub/plugins/bus-cache/src/ingest.js';
import { LatestJson } from '../../hub/plugins/bus-cache/src/latest-json.js';

const DEVICES = Number(process.env.LOOKOUT_BENCH_DEVICES ?? 1000);
const REQUESTS = Number(process.env.LOOKOUT_BENCH_REQUESTS ?? 300);
const WARMUP = 30;

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string): Promise<{ ms: number; bytes: number; status: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, bytes, status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

function stats(xs: number[]): { median: number; p99: number; mean: number } {
  const s = [...xs].sort((a, b) => a - b);
  return {
    median: s[Math.floor(s.length / 2)],
    p99: s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)],
    mean: xs.reduce((a, b) => a + b, 0) / xs.length,
  };
}

async function measure(url: string): Promise<{ median: number; p99: number; mean: number; bytes: number }> {
  let bytes = 0;
  for (let i = 0; i < WARMUP; i++) await get(url);
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const r = await get(url);
    if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
    bytes = r.bytes;
    times.push(r.ms);
  }
  return { ...stats(times), bytes };
}

const f = (n: number) => n.toFixed(2);

async function main(): Promise<void> {
  const bus = new MemoryBus();
  const hub = await startHub({
    bus,
    port: 0,
    dataDir: '/tmp/lookout-hub-bench-nonexistent',
    // Each run starts empty: a file store would reload the previous run's thousand devices.
    stateStore: new MemoryStateStore(),
    defaultMetrics: false,
    logger: createLogger({ level: 'silent' }),
    env: { LOOKOUT_HUB_MAX_DEVICES: String(Math.max(DEVICES, 10_000)) },
  });
  try {
    for (let i = 0; i < DEVICES; i++) {
      const id = `cam-${String(i).padStart(4, '0')}`;
      const send = (suffix: string, body: unknown) => bus.publish(`devices/${id}/${suffix}`, JSON.stringify(body));
      // The hello first: the hub takes messages only from a device it knows (announced, or named by the registry).
      await send('hello', msg.hello(id, ['127.0.0.1'], 20000 + (i % 1000)));
      await send('status', msg.status(id));
      await send('telemetry', msg.telemetry(45 + (i % 20), 10));
      await send('dets', msg.dets(3, i));
      await send('health', msg.health(id));
      // The in-process bus keeps what it published; not needed here.
      bus.published.length = 0;
    }
    const latest = await measure(`${hub.url}/fleet/mqtt/latest`);
    const health = await measure(`${hub.url}/health`);
    const body = JSON.parse(
      await new Promise<string>((resolve) => {
        request(`${hub.url}/fleet/mqtt/latest`, { agent }, (res) => {
          let t = '';
          res.on('data', (c: Buffer) => (t += c.toString()));
          res.on('end', () => resolve(t));
        }).end();
      }),
    ) as { count: number };
    if (body.count !== DEVICES) throw new Error(`expected ${DEVICES} devices in the answer, got ${body.count}`);
    const floor = await transferFloor(JSON.stringify(body));
    const stringify: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t = process.hrtime.bigint();
      JSON.stringify(body);
      stringify.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    const s = stats(stringify);
    const pieces = joinedPieces();
    console.log(
      `GET /fleet/mqtt/latest, ${DEVICES} devices, ${(latest.bytes / 1024).toFixed(0)} KiB: median ${f(latest.median)} ms, p99 ${f(latest.p99)} ms (${REQUESTS} requests, keep-alive)`,
    );
    console.log(`baseline GET /health on the same hub: median ${f(health.median)} ms, p99 ${f(health.p99)} ms`);
    console.log(`baseline JSON.stringify of the same answer in process: median ${f(s.median)} ms, p99 ${f(s.p99)} ms`);
    console.log(`baseline bare node:http answering the same bytes, made once (the transfer floor): median ${f(floor.median)} ms, p99 ${f(floor.p99)} ms`);
    console.log(
      `ratio latest / transfer floor: ${(latest.median / floor.median).toFixed(2)} (median; 1.00: the route costs nothing beyond sending its bytes, which JSON.stringify alone would take ${(s.median / floor.median).toFixed(2)}× the floor to make)`,
    );
    console.log(
      `in process, a tenth of the fleet changed between reads: entries made once when they change and joined (LatestJson) median ${f(pieces.median)} ms, p99 ${f(pieces.p99)} ms; JSON.stringify of the same answer, timed alternately, median ${f(pieces.plainMedian)} ms, p99 ${f(pieces.plainP99)} ms; ratio ${(pieces.median / pieces.plainMedian).toFixed(2)} (aim <= 0.5)`,
    );
    console.log(
      `in process, read again with nothing changed: LatestJson median ${f(pieces.unchangedMedian)} ms, p99 ${f(pieces.unchangedP99)} ms; ratio to the same JSON.stringify ${(pieces.unchangedMedian / pieces.plainMedian).toFixed(2)} (aim <= 0.5)`,
    );
    console.log(
      `ratio latest / stringify alone: ${(latest.median / s.median).toFixed(2)} (median); latest / health: ${(latest.median / health.median).toFixed(1)}`,
    );
  } finally {
    agent.destroy();
    await hub.close();
    await bus.close();
  }
}

/** A bare node:http server on loopback answering `text`, made once, to the same keep-alive client. */
async function transferFloor(text: string): Promise<{ median: number; p99: number }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await measure(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * The same thousand devices in a bus-cache ingest of their own, answered by LatestJson as the route
 * does; JSON.stringify of the route's answer (the same data) is timed beside it in this process.
 */
function joinedPieces(): { median: number; p99: number; plainMedian: number; plainP99: number; unchangedMedian: number; unchangedP99: number } {
  const ingest = new Ingest(
    { maxMessageBytes: 256 * 1024, maxDepth: 32, maxDevices: Math.max(DEVICES, 10_000), maxTopicsPerDevice: 64, maxAlerts: 20, maxChunks: 20 },
    { log: createLogger({ level: 'silent' }), connected: () => true },
  );
  for (let i = 0; i < DEVICES; i++) {
    const id = `cam-${String(i).padStart(4, '0')}`;
    const send = (suffix: string, body: unknown) => ingest.handle(`devices/${id}/${suffix}`, Buffer.from(JSON.stringify(body)), { retain: false });
    send('hello', msg.hello(id, ['127.0.0.1'], 20000 + (i % 1000)));
    send('status', msg.status(id));
    send('telemetry', msg.telemetry(45 + (i % 20), 10));
    send('dets', msg.dets(3, i));
    send('health', msg.health(id));
  }
  const latest = new LatestJson(120);
  const ids = latest.ids(ingest.devices, ingest.membership);
  // The same data as a plain object, for JSON.stringify beside (parsed from the answer: plain JSON objects, V8's fast path).
  const answer = JSON.parse(latest.answer(ingest.devices, ids, Date.now(), undefined)) as { count: number };
  if (answer.count !== DEVICES) throw new Error(`expected ${DEVICES} devices in the in-process answer, got ${answer.count}`);
  const joined: number[] = [];
  const plain: number[] = [];
  const unchanged: number[] = [];
  let n = 0;
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    // A tenth of the fleet changed since the last read (one telemetry message each): those entries are made again.
    for (let k = 0; k < DEVICES / 10; k++) {
      const id = ids[n++ % ids.length];
      ingest.handle(`devices/${id}/telemetry`, Buffer.from(JSON.stringify(msg.telemetry(50, 10))), { retain: false });
    }
    let t = process.hrtime.bigint();
    const text = latest.answer(ingest.devices, ids, Date.now(), undefined);
    const a = Number(process.hrtime.bigint() - t) / 1e6;
    t = process.hrtime.bigint();
    JSON.stringify(answer);
    const b = Number(process.hrtime.bigint() - t) / 1e6;
    // Read again at once: nothing changed since (several clients polling, or reads faster than the devices publish).
    t = process.hrtime.bigint();
    latest.answer(ingest.devices, ids, Date.now(), undefined);
    const c = Number(process.hrtime.bigint() - t) / 1e6;
    if (text.length < 1000) throw new Error('LatestJson answered almost nothing');
    if (i >= WARMUP) {
      joined.push(a);
      plain.push(b);
      unchanged.push(c);
    }
  }
  const s = stats(joined);
  const p = stats(plain);
  const u = stats(unchanged);
  return { median: s.median, p99: s.p99, plainMedian: p.median, plainP99: p.p99, unchangedMedian: u.median, unchangedP99: u.p99 };
}

await main();
