/**
 * The console and GET /fleet/events on a big fleet, beside a small one measured in the same run. For
 * each fleet (LOOKOUT_BENCH_DEVICES, default 1 000, then the 20-device baseline) a fresh hub (the
 * console's plugin set, its embedded broker: the real bus path) hears every device say hello, status
 * and health, then telemetry and dets at LOOKOUT_BENCH_RATE_HZ each (phases spread over the period),
 * published on the broker as the hub's own bus identity (one connection speaks for the fleet).
 *
 * In Debian's chromium (playwright-core, a fresh incognito context per fleet):
 *   - first paint: navigation → the first device card laid out, and → the fleet page's whole first
 *     page of cards (min(fleet, 48)); taken in the page (performance.now() at the next animation
 *     frame after a MutationObserver sees the cards);
 *   - update rate while the fleet publishes (LOOKOUT_BENCH_SECONDS): the page's DOM commits per
 *     second (MutationObserver callbacks with a change), the device cards they touched per second,
 *     and the main thread's busy share (CDP Performance.getMetrics TaskDuration and ScriptDuration
 *     deltas over the window);
 *   - browser memory: JSHeapUsedSize (after HeapProfiler.collectGarbage), DOM nodes and JS event
 *     listeners once the first page shows, and again after the update window.
 * Then /fleet/events from a client in this process (all default kinds, as the console asks them) for
 * LOOKOUT_BENCH_SSE_SECONDS: events a second it receives, and the latency from the publish of a
 * probe device's incident (every LOOKOUT_BENCH_PROBE_MS) to the client's parsed event, p50/p99.
 * The hub, the publisher and the SSE client share this process; chromium runs in its own.
 *
 *   node dist/test/bench/console-fleet-scale.bench.js     (npm run bench -- console-fleet-scale)
 *   LOOKOUT_BENCH_DEVICES=1000 LOOKOUT_BENCH_RATE_HZ=1 LOOKOUT_BENCH_SECONDS=30 LOOKOUT_BENCH_SSE_SECONDS=10 \
 *     LOOKOUT_BENCH_PROBE_MS=200 node dist/test/bench/console-fleet-scale.bench.js
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import type { MqttClient } from 'mqtt';
import { chromium, type CDPSession } from 'playwright-core';
import type { RunningHub } from '../../hub/src/start-hub.js';
import { CHROMIUM, CHROMIUM_ARGS, consolePluginSet, hubBusClient } from '../browser/console-fleet.js';
import { api, endClient, msg, testHub, waitFor } from '../support/hub-helpers.js';
import { pct } from './process-figures.js';

const BIG = Number(process.env.LOOKOUT_BENCH_DEVICES ?? 1000);
const BASELINE = 20;
const RATE_HZ = Number(process.env.LOOKOUT_BENCH_RATE_HZ ?? 1);
const SECONDS = Number(process.env.LOOKOUT_BENCH_SECONDS ?? 30);
const SSE_SECONDS = Number(process.env.LOOKOUT_BENCH_SSE_SECONDS ?? 10);
const PROBE_MS = Number(process.env.LOOKOUT_BENCH_PROBE_MS ?? 200);
/** The fleet page's page size (hub/plugins/console/web/fleet-view.ts FLEET_PAGE_SIZE). */
const PAGE = 48;
const PROBE = 'probe-0';

const id = (i: number) => `cam-${String(i).padStart(5, '0')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Figures {
  firstCardMs: number;
  firstPageMs: number;
  commitsPerS: number;
  cardUpdatesPerS: number;
  busyPct: number;
  scriptPct: number;
  heapLoadMb: number;
  heapAfterMb: number;
  nodesLoad: number;
  nodesAfter: number;
  listenersLoad: number;
  listenersAfter: number;
  published: number;
  ssePerS: number;
  sseDevicePerS: number;
  probeP50: number;
  probeP99: number;
  probeN: number;
}

/** Each device's telemetry and dets at RATE_HZ, device i at phase i/n of the period: one timer for the fleet. */
function startFleet(bus: MqttClient, n: number): { stop(): void; published(): number } {
  const period = 1000 / RATE_HZ;
  const t0 = performance.now();
  const next = Array.from({ length: n }, (_, i) => t0 + (i / n) * period);
  let published = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    for (let i = 0; i < n; i++) {
      if (next[i] > now) continue;
      next[i] += period;
      bus.publish(`devices/${id(i)}/telemetry`, JSON.stringify(msg.telemetry(40 + (i % 20), 10)), { qos: 0 });
      bus.publish(`devices/${id(i)}/dets`, JSON.stringify(msg.dets(1 + (published % 3))), { qos: 0 });
      published += 2;
    }
  }, 10);
  return { stop: () => clearInterval(timer), published: () => published };
}

async function metrics(cdp: CDPSession): Promise<Record<string, number>> {
  const { metrics: list } = await cdp.send('Performance.getMetrics');
  return Object.fromEntries(list.map((m) => [m.name, m.value]));
}

async function gcMetrics(cdp: CDPSession): Promise<Record<string, number>> {
  await cdp.send('HeapProfiler.collectGarbage');
  return metrics(cdp);
}

/** In the page before anything loads: when the cards first show, and what each DOM commit touches. */
function pageProbe(want: number): void {
  const b = { firstCard: -1, firstPage: -1, commits: 0, cardUpdates: 0 };
  (window as unknown as { __bench: typeof b }).__bench = b;
  new MutationObserver((records) => {
    b.commits++;
    const cards = new Set<Element>();
    for (const r of records) {
      const el = r.target.nodeType === 1 ? (r.target as Element) : r.target.parentElement;
      const card = el?.closest('[data-testid=device-card]');
      if (card) cards.add(card);
    }
    b.cardUpdates += cards.size;
    if (b.firstPage >= 0) return;
    const n = document.querySelectorAll('[data-testid=device-card]').length;
    // The next animation frame: the cards are laid out and about to paint.
    if (n > 0 && b.firstCard < 0) requestAnimationFrame(() => (b.firstCard = b.firstCard < 0 ? performance.now() : b.firstCard));
    if (n >= want) {
      b.firstPage = 0;
      requestAnimationFrame(() => (b.firstPage = performance.now()));
    }
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
}

async function inChromium(hub: RunningHub, n: number, f: Partial<Figures>): Promise<void> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    // Pictures: the simulated devices have no camera; the page's snapshot requests are answered empty at once.
    await page.route('**/stream/snapshot*', (r) => r.fulfill({ status: 404, body: '' }));
    await page.addInitScript(pageProbe, Math.min(n, PAGE));
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(`${hub.url}/`);
    await page.waitForFunction(() => (window as unknown as { __bench: { firstPage: number } }).__bench.firstPage > 0, undefined, { timeout: 120_000 });
    const b0 = await page.evaluate(() => (window as unknown as { __bench: { firstCard: number; firstPage: number } }).__bench);
    f.firstCardMs = b0.firstCard;
    f.firstPageMs = b0.firstPage;
    await sleep(2000);
    const load = await gcMetrics(cdp);
    const c0 = await page.evaluate(() => ({ ...(window as unknown as { __bench: { commits: number; cardUpdates: number } }).__bench }));
    const m0 = await metrics(cdp);
    const t0 = performance.now();
    await sleep(SECONDS * 1000);
    const m1 = await metrics(cdp);
    const c1 = await page.evaluate(() => ({ ...(window as unknown as { __bench: { commits: number; cardUpdates: number } }).__bench }));
    const s = (performance.now() - t0) / 1000;
    const after = await gcMetrics(cdp);
    f.commitsPerS = (c1.commits - c0.commits) / s;
    f.cardUpdatesPerS = (c1.cardUpdates - c0.cardUpdates) / s;
    f.busyPct = ((m1.TaskDuration - m0.TaskDuration) / s) * 100;
    f.scriptPct = ((m1.ScriptDuration - m0.ScriptDuration) / s) * 100;
    f.heapLoadMb = load.JSHeapUsedSize / 2 ** 20;
    f.heapAfterMb = after.JSHeapUsedSize / 2 ** 20;
    f.nodesLoad = load.Nodes;
    f.nodesAfter = after.Nodes;
    f.listenersLoad = load.JSEventListeners;
    f.listenersAfter = after.JSEventListeners;
  } finally {
    await browser.close();
  }
}

/** GET /fleet/events as the console asks it: events a second, and publish→event of the probe's incidents. */
async function sseClient(hub: RunningHub, bus: MqttClient, f: Partial<Figures>): Promise<void> {
  const controller = new AbortController();
  const sent = new Map<number, number>();
  const latencies: number[] = [];
  let counting = false;
  let events = 0;
  let deviceEvents = 0;
  const res = await fetch(`${hub.url}/fleet/events`, { signal: controller.signal });
  const parser = createParser({
    onEvent: (e) => {
      if (!counting) return;
      events++;
      if (e.event === 'device') deviceEvents++;
      if (e.event !== 'incident') return;
      const m = JSON.parse(e.data) as { device_id: string; message: { probe?: number } };
      const at = m.device_id === PROBE && m.message.probe !== undefined ? sent.get(m.message.probe) : undefined;
      if (at !== undefined) latencies.push(performance.now() - at);
    },
  });
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      /* aborted at the end */
    }
  })();
  // The cards of the whole fleet come first on connecting: let them pass before counting.
  await sleep(2000);
  counting = true;
  const t0 = performance.now();
  let seq = 0;
  const probe = setInterval(() => {
    const n = seq++;
    sent.set(n, performance.now());
    bus.publish(`devices/${PROBE}/events/incident`, JSON.stringify({ ...msg.incident('probe'), probe: n }), { qos: 0 });
  }, PROBE_MS);
  await sleep(SSE_SECONDS * 1000);
  clearInterval(probe);
  await sleep(Math.min(2000, PROBE_MS * 5)); // the last probes' events
  counting = false;
  const s = (performance.now() - t0) / 1000;
  controller.abort();
  await reading;
  f.ssePerS = events / s;
  f.sseDevicePerS = deviceEvents / s;
  f.probeP50 = pct(latencies, 0.5);
  f.probeP99 = pct(latencies, 0.99);
  f.probeN = latencies.length;
}

async function measure(n: number): Promise<Figures> {
  const dir = await mkdtemp(join(tmpdir(), 'lookout-console-scale-bench-'));
  const hub = await testHub({
    ...(await consolePluginSet()),
    host: '127.0.0.1',
    dataDir: join(dir, 'hub'),
    env: { READINESS_START_DELAY_MS: '600000', LOOKOUT_HISTORY_DB: ':memory:' },
  });
  const bus = await hubBusClient(hub, `console-scale-bench-${n}`);
  const f: Partial<Figures> = {};
  let fleet: ReturnType<typeof startFleet> | undefined;
  try {
    for (let i = 0; i < n; i++) {
      bus.publish(`devices/${id(i)}/hello`, JSON.stringify(msg.hello(id(i), ['127.0.0.1'], 9, [id(i)])), { qos: 0 });
      bus.publish(`devices/${id(i)}/status`, JSON.stringify(msg.status(id(i))), { qos: 0 });
      bus.publish(`devices/${id(i)}/health`, JSON.stringify(msg.health(id(i))), { qos: 0 });
      if (i % 100 === 99) await sleep(5);
    }
    // The probe is a device too (the hub takes a device's events once it said hello).
    bus.publish(`devices/${PROBE}/hello`, JSON.stringify(msg.hello(PROBE, ['127.0.0.1'], 9, [PROBE])), { qos: 0 });
    bus.publish(`devices/${PROBE}/status`, JSON.stringify(msg.status(PROBE)), { qos: 0 });
    await waitFor(
      `all ${n} devices in the hub`,
      async () => Object.keys((await api(hub.url, '/fleet/mqtt/latest')).body.devices ?? {}).length >= n + 1,
      60_000,
      250,
    );
    fleet = startFleet(bus, n);
    const t0 = performance.now();
    await inChromium(hub, n, f);
    await sseClient(hub, bus, f);
    f.published = fleet.published() / ((performance.now() - t0) / 1000);
  } finally {
    fleet?.stop();
    await endClient(bus);
    await hub.close();
    await rm(dir, { recursive: true, force: true });
  }
  return f as Figures;
}

async function main(): Promise<void> {
  console.log(
    `console and /fleet/events at ${BIG} devices beside ${BASELINE} (same run): telemetry + dets at ${RATE_HZ} Hz per device, ` +
      `${SECONDS} s of updates in chromium, ${SSE_SECONDS} s of /fleet/events`,
  );
  const big = await measure(BIG);
  const base = await measure(BASELINE);
  const rows: [string, keyof Figures, number][] = [
    ['bus messages published /s', 'published', 0],
    ['first card shown (ms from navigation)', 'firstCardMs', 0],
    [`first page of cards shown (ms; min(fleet, ${PAGE}) cards)`, 'firstPageMs', 0],
    ['page DOM commits /s while publishing', 'commitsPerS', 1],
    ['device cards updated /s', 'cardUpdatesPerS', 1],
    ['main thread busy (% of wall, TaskDuration)', 'busyPct', 1],
    ['  of which script (% of wall, ScriptDuration)', 'scriptPct', 1],
    ['JS heap used after load (MiB, after GC)', 'heapLoadMb', 2],
    [`JS heap used after ${SECONDS} s of updates (MiB, after GC)`, 'heapAfterMb', 2],
    ['DOM nodes after load', 'nodesLoad', 0],
    [`DOM nodes after ${SECONDS} s`, 'nodesAfter', 0],
    ['JS event listeners after load', 'listenersLoad', 0],
    [`JS event listeners after ${SECONDS} s`, 'listenersAfter', 0],
    ['/fleet/events: events /s to one client', 'ssePerS', 0],
    ['  of which device cards /s', 'sseDevicePerS', 0],
    ['/fleet/events: probe publish→event p50 (ms)', 'probeP50', 2],
    ['/fleet/events: probe publish→event p99 (ms)', 'probeP99', 2],
    ['  probe events received', 'probeN', 0],
  ];
  const w = Math.max(...rows.map((r) => r[0].length));
  console.log(`${''.padEnd(w)} | ${`${BIG} devices`.padStart(13)} | ${`${BASELINE} devices`.padStart(11)} | ratio`);
  for (const [label, key, digits] of rows) {
    const a = big[key];
    const b = base[key];
    console.log(`${label.padEnd(w)} | ${a.toFixed(digits).padStart(13)} | ${b.toFixed(digits).padStart(11)} | ${b ? (a / b).toFixed(2) : '—'}x`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
