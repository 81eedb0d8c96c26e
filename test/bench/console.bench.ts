/**
 * The fleet console: (1) its first load in Debian's chromium (fresh profile: nothing cached) until
 * the fleet view shows every card, with the bytes transferred, beside a reload (assets from the
 * browser cache: content-hashed and immutable) and beside the baseline of a navigation to GET
 * /health on the same hub; (2) GET /fleet/events fan-out: an incident published on the bus to 100
 * SSE clients, latency from the publish to each client's parsed event (p50/p99), beside the same
 * with one client. The hub runs on an in-process bus with 20 devices' messages; the clients run in
 * this process, so their parsing shares the CPU with the hub.
 *
 *   node dist/test/bench/console.bench.js     (npm run bench -- console)
 *   LOOKOUT_BENCH_SSE_CLIENTS=500 LOOKOUT_BENCH_ROUNDS=20 node dist/test/bench/console.bench.js
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { chromium } from 'playwright-core';
import { MemoryBus } from '../../core/src/bus/memory-bus.js';
import { createLogger } from '../../core/src/log/logger.js';
import { startHub, type RunningHub } from '../../hub/src/start-hub.js';
import { MemoryStateStore } from '../../hub/src/state/memory-state-store.js';
import { CHROMIUM, CHROMIUM_ARGS, consolePluginSet } from '../browser/console-fleet.js';
import { msg } from '../support/hub-helpers.js';

const DEVICES = 20;
const LOADS = Number(process.env.LOOKOUT_BENCH_LOADS ?? 5);
const CLIENTS = Number(process.env.LOOKOUT_BENCH_SSE_CLIENTS ?? 100);
const ROUNDS = Number(process.env.LOOKOUT_BENCH_ROUNDS ?? 50);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * p) - 1)];
};
const f = (n: number) => n.toFixed(2);

async function firstLoads(hub: RunningHub, dir: string): Promise<void> {
  const rows: { first: number; firstBytes: number; reload: number; reloadBytes: number; health: number; healthBytes: number }[] = [];
  for (let i = 0; i < LOADS; i++) {
    const ctx = await chromium.launchPersistentContext(join(dir, `profile-${i}`), { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    try {
      const page = await ctx.newPage();
      const cdp = await ctx.newCDPSession(page);
      await cdp.send('Network.enable');
      // The page's own weight: the document and its assets (not the data routes it then reads).
      let bytes = 0;
      const urls = new Map<string, string>();
      cdp.on('Network.requestWillBeSent', (e: { requestId: string; request: { url: string } }) => urls.set(e.requestId, e.request.url));
      cdp.on('Network.loadingFinished', (e: { requestId: string; encodedDataLength: number }) => {
        const path = new URL(urls.get(e.requestId) ?? 'about:blank').pathname;
        if (path === '/' || path === '/health' || path.startsWith('/console/')) bytes += e.encodedDataLength;
      });
      const load = async (url: string, ready: () => Promise<unknown>) => {
        bytes = 0;
        const t0 = performance.now();
        await page.goto(url);
        await ready();
        const ms = performance.now() - t0;
        // Network events arrive after the page says it is ready: a moment for the last of them.
        await new Promise((r) => setTimeout(r, 200));
        return { ms, bytes };
      };
      const cardsShown = () => page.waitForFunction((n) => document.querySelectorAll('[data-testid=device-card]').length === n, DEVICES);
      const health = await load(`${hub.url}/health`, () => page.waitForLoadState('load'));
      const first = await load(`${hub.url}/`, cardsShown);
      await page.goto('about:blank');
      const reload = await load(`${hub.url}/`, cardsShown);
      rows.push({ first: first.ms, firstBytes: first.bytes, reload: reload.ms, reloadBytes: reload.bytes, health: health.ms, healthBytes: health.bytes });
    } finally {
      await ctx.close();
    }
  }
  const m = (k: keyof (typeof rows)[number]) => median(rows.map((r) => r[k]));
  console.log(`console first load (${LOADS} fresh chromium profiles, ${DEVICES} devices; median):`);
  console.log(`  first load until every card shows  ${f(m('first'))} ms   ${m('firstBytes')} bytes transferred (page and assets, headers included)`);
  console.log(`  reload (assets cached, immutable)  ${f(m('reload'))} ms   ${m('reloadBytes')} bytes transferred`);
  console.log(`  baseline: navigate to GET /health  ${f(m('health'))} ms   ${m('healthBytes')} bytes`);
  console.log(`  ratio first load / baseline        ${f(m('first') / m('health'))}x`);
}

/** `clients` SSE readers of incidents; each round publishes one incident and waits for every client to have it. */
async function fanOut(hub: RunningHub, bus: MemoryBus, clients: number): Promise<number[]> {
  const controllers: AbortController[] = [];
  const waiting = new Map<number, { sentAt: number; left: number; done: () => void }>();
  const latencies: number[] = [];
  let connected = 0;
  const readers = Array.from({ length: clients }, async () => {
    const controller = new AbortController();
    controllers.push(controller);
    const res = await fetch(`${hub.url}/fleet/events?kind=incident`, { signal: controller.signal });
    connected++;
    const parser = createParser({
      onEvent: (e) => {
        const round = Number((JSON.parse(e.data) as { message: { round: number } }).message.round);
        const w = waiting.get(round);
        if (!w) return;
        latencies.push(performance.now() - w.sentAt);
        if (--w.left === 0) w.done();
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      /* aborted at the end */
    }
  });
  while (connected < clients) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 200));
  for (let round = 0; round < ROUNDS + 5; round++) {
    await new Promise<void>((resolve) => {
      waiting.set(round, { sentAt: performance.now(), left: clients, done: resolve });
      void bus.publish('devices/cam-000/events/incident', JSON.stringify({ ...msg.incident('bench'), round }));
    });
    waiting.delete(round);
    if (round === 4) latencies.length = 0; // warm-up rounds
  }
  controllers.forEach((c) => c.abort());
  await Promise.all(readers);
  return latencies;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'lookout-console-bench-'));
  const bus = new MemoryBus();
  const set = await consolePluginSet();
  const hub = await startHub({
    ...set,
    bus,
    port: 0,
    dataDir: join(dir, 'hub'),
    stateStore: new MemoryStateStore(),
    defaultMetrics: false,
    logger: createLogger({ level: 'silent' }),
    env: { READINESS_START_DELAY_MS: '600000', LOOKOUT_EVENTS_MAX_CLIENTS: String(Math.max(1000, CLIENTS * 2)) },
  });
  try {
    for (let i = 0; i < DEVICES; i++) {
      const id = `cam-${String(i).padStart(3, '0')}`;
      const send = (suffix: string, body: unknown) => bus.publish(`devices/${id}/${suffix}`, JSON.stringify(body));
      await send('hello', msg.hello(id, ['127.0.0.1'], 1));
      await send('status', msg.status(id));
      await send('telemetry', msg.telemetry(45, 10));
      await send('health', msg.health(id));
    }
    await firstLoads(hub, dir);
    const one = await fanOut(hub, bus, 1);
    const many = await fanOut(hub, bus, CLIENTS);
    console.log(`\nSSE fan-out of an incident (publish on the bus → parsed event in each client), ${ROUNDS} rounds:`);
    console.log(`  ${String(CLIENTS).padStart(3)} clients   p50 ${f(pct(many, 0.5))} ms   p99 ${f(pct(many, 0.99))} ms   (${many.length} events)`);
    console.log(`    1 client    p50 ${f(pct(one, 0.5))} ms   p99 ${f(pct(one, 0.99))} ms   (baseline)`);
    console.log(`  ratio p50 ${f(pct(many, 0.5) / pct(one, 0.5))}x, p99 ${f(pct(many, 0.99) / pct(one, 0.99))}x`);
  } finally {
    await hub.close();
    await bus.close();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
