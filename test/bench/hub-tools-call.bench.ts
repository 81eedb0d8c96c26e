/**
 * What `POST /tools/call` costs beyond the MCP call it makes. A real `lookout-edge` process (the
 * mesh-camera test image: identity, system-health, status and the real peer-mesh plugin) serves its
 * tools over MCP streamable HTTP on 127.0.0.1; a hub runs in this process with its embedded broker,
 * where the device announces itself. Measured alternately in one run, after a warm-up:
 *
 *  (a) the tool called directly from an MCP SDK client, connected once and reused (no tools/list,
 *      so the SDK validates no output schema: the cheapest direct call);
 *  (b) the same tool through `POST /tools/call?target=<id>` over keep-alive HTTP;
 *  (c) the enriched `get_system_health` through the hub (the health call and its two enrichment
 *      calls, get_device_identity and get_peer_mesh_status, in parallel; identity answers kept for
 *      LOOKOUT_HUB_IDENTITY_CACHE_MS), the same through a second hub that asks identity every time
 *      (LOOKOUT_HUB_IDENTITY_CACHE_MS=0, the device named by its registry file), and each of the
 *      three tools called directly.
 *
 *  (d) the same tool through two more hubs alike but for TLS (the device named by their registry
 *      files): one plain HTTP, one HTTPS with the fleet-CA hub server certificate (`--tls`), each on
 *      its own kept-alive connection: what TLS adds to a call once the handshake is done.
 *
 *  (e) the same tool through one more hub to two lookout-edge processes alike but for their tool
 *      server's transport: one plain HTTP, one HTTPS with its fleet-CA device certificate
 *      (`--tool-tls`), which the hub verifies against the fleet CA and pins (issue 32, item 3), each
 *      on the hub's kept-alive connection to it: what device TLS adds to a call.
 *
 * Overhead (b − a) against the aim of 0.5 ms; TLS (d) and device TLS (e) against the aim of 0.2 ms; the enriched overhead (enriched − direct health)
 * against the slowest enrichment call's direct time. The device serves one call at a time (one
 * event loop, about a millisecond of CPU per call), so three calls in parallel still queue there.
 *
 *   node dist/test/bench/hub-tools-call.bench.js     (npm run bench -- hub-tools-call)
 *   LOOKOUT_BENCH_CALLS=1000 LOOKOUT_BENCH_TOOL=get_system_health node dist/test/bench/hub-tools-call.bench.js
 */
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { Agent as TlsAgent, request as tlsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryBus } from '../../core/src/bus/memory-bus.js';
import { createLogger } from '../../core/src/log/logger.js';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { startHub } from '../../hub/src/start-hub.js';
import { MemoryStateStore } from '../../hub/src/state/memory-state-store.js';
import { provisionFleetCertificates } from '../../lib/tls/provision-fleet.js';
import { startDeviceProcess } from '../support/device-process.js';
import { waitFor } from '../support/hub-helpers.js';

const CALLS = Number(process.env.LOOKOUT_BENCH_CALLS ?? 400);
const WARMUP = Number(process.env.LOOKOUT_BENCH_WARMUP ?? 100);
/** The cheap tool of (a) and (b): get_device_identity answers from what the identity plugin holds. */
const TOOL = process.env.LOOKOUT_BENCH_TOOL ?? 'get_device_identity';
const DEVICE_ID = 'bench-cam';
const SECRET = 'hub-tools-call-bench-fleet-secret';
const AIM_MS = 0.5;
const TLS_AIM_MS = 0.2;

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
/** Set once the fleet CA exists: the HTTPS hub's kept-alive connection. */
let tlsAgent: TlsAgent | undefined;

// The direct SDK client's fetch warns once per request past 1 500 listeners on its transport's signal: counted, said once at the end.
let leakWarnings = 0;
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name === 'MaxListenersExceededWarning') leakWarnings++;
  else console.error(w);
});

interface HubAnswer {
  status: string;
  result: Record<string, unknown> | null;
  error?: { code: string; message: string };
  _vms_enriched?: boolean;
  _vms_enrichment_missing?: string[];
}

/** One POST /tools/call on the kept-alive socket; rejects unless the hub answered 200 with status ok. */
function hubCall(base: string, tool: string, target = DEVICE_ID): Promise<{ ms: number; answer: HubAnswer }> {
  const body = JSON.stringify({ tool, arguments: {} });
  const started = process.hrtime.bigint();
  const tls = base.startsWith('https:');
  return new Promise((resolve, reject) => {
    const req = (tls ? tlsRequest : request)(
      `${base}/tools/call?target=${target}`,
      { agent: tls ? tlsAgent : agent, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`POST /tools/call ${tool} answered ${res.statusCode}: ${text}`));
          const answer = JSON.parse(text) as HubAnswer;
          if (answer.status !== 'ok') return reject(new Error(`POST /tools/call ${tool}: ${text}`));
          resolve({ ms, answer });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function directCall(client: Client, tool: string): Promise<number> {
  const started = process.hrtime.bigint();
  const r = await client.callTool({ name: tool, arguments: {} });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.isError) throw new Error(`${tool} failed on the device: ${JSON.stringify(r.content)}`);
  return ms;
}

interface Stats {
  median: number;
  p99: number;
}

function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p99: s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] };
}

interface Series {
  times: number[];
  /** CPU time of this process (the hub and the callers) per call, in ms. */
  cpuMs: number;
}

/**
 * Runs each step once per round, in turn, the order rotating every round; after the warm-up,
 * each step's times and the CPU this process spent on it (the hub and the callers both run here;
 * the device is another process).
 */
async function alternate(steps: (() => Promise<number>)[]): Promise<Series[]> {
  const series = steps.map(() => ({ times: [] as number[], cpuMs: 0 }));
  for (let round = 0; round < WARMUP + CALLS; round++) {
    for (let k = 0; k < steps.length; k++) {
      const i = (round + k) % steps.length;
      const cpu = process.cpuUsage();
      const ms = await steps[i]();
      const used = process.cpuUsage(cpu);
      if (round >= WARMUP) {
        series[i].times.push(ms);
        series[i].cpuMs += (used.user + used.system) / 1000 / CALLS;
      }
    }
  }
  return series;
}

/** The median of b − a taken round by round (both ran in the same round, so under the same load). */
function pairedMedian(a: number[], b: number[]): number {
  return stats(b.map((x, i) => x - a[i])).median;
}

const f = (n: number) => n.toFixed(3);
const line = (name: string, s: Series) => {
  const t = stats(s.times);
  return `${name.padEnd(52)} median ${f(t.median)} ms  p99 ${f(t.p99)} ms  cpu ${f(s.cpuMs)} ms/call`;
};

async function main(): Promise<void> {
  const quiet = createLogger({ level: 'silent' });
  // Readiness checks call the device's tools too: kept out of the measurement.
  const env = { READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '600000' };
  const hub = await startHub({
    anonymousBroker: true,
    fleetSecret: SECRET,
    port: 0,
    brokerPort: 0,
    dataDir: '/tmp/lookout-hub-bench-nonexistent',
    stateStore: new MemoryStateStore(),
    defaultMetrics: false,
    deviceNetworks: ['127.0.0.1/32'],
    logger: quiet,
    env,
  });
  const device = await startDeviceProcess({
    deviceId: DEVICE_ID,
    mqtt: hub.brokerUrl,
    image: join(packageRoot(), 'test', 'fixtures', 'images', 'mesh-camera.json'),
    layer: 'layer0',
    env: { MESH_KEY: 'hub-tools-call-bench-mesh-key-0001', HEALTH_INTERVAL_MS: '60000', STATUS_INTERVAL_MS: '60000', LOOKOUT_LOG_LEVEL: 'warn' },
  });
  // A second hub that asks get_device_identity with every health answer, as the hub did before it kept identities.
  const dir = mkdtempSync(join(tmpdir(), 'hub-tools-call-bench-'));
  const registryFile = join(dir, 'registry.json');
  writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: DEVICE_ID, ips: ['127.0.0.1'], tool_port: device.ready.ports.tools }] }));
  const bus = new MemoryBus();
  const asking = await startHub({
    bus,
    fleetSecret: SECRET,
    port: 0,
    dataDir: dir,
    registryFile,
    stateStore: new MemoryStateStore(),
    defaultMetrics: false,
    logger: quiet,
    env: { ...env, LOOKOUT_HUB_IDENTITY_CACHE_MS: '0' },
  });
  // (d): two hubs alike but for TLS, the device named by the same registry file.
  const caDir = join(dir, 'ca');
  const tlsDir = join(dir, 'tls-hub');
  // (e): the device with TLS gets its certificate; the hub of (e) the fleet CA in its data dir.
  const deviceTlsRoot = join(dir, 'device-tls');
  const deviceTlsHubDir = join(dir, 'device-tls-hub');
  await provisionFleetCertificates({ caDir, hubDataDir: tlsDir });
  await provisionFleetCertificates({
    caDir,
    hubDataDir: deviceTlsHubDir,
    devices: [{ deviceId: `${DEVICE_ID}-tls`, dataRoot: deviceTlsRoot, ips: ['127.0.0.1'] }],
  });
  tlsAgent = new TlsAgent({ keepAlive: true, maxSockets: 1, ca: readFileSync(join(caDir, 'ca.crt')) });
  const twin = { fleetSecret: SECRET, port: 0, registryFile, defaultMetrics: false, logger: quiet, env } as const;
  const plainBus = new MemoryBus();
  const tlsBus = new MemoryBus();
  const plainHub = await startHub({ ...twin, bus: plainBus, dataDir: join(dir, 'plain-hub'), stateStore: new MemoryStateStore() });
  const tlsHub = await startHub({ ...twin, bus: tlsBus, dataDir: tlsDir, stateStore: new MemoryStateStore(), tls: true });
  const deviceTlsHub = await startHub({
    anonymousBroker: true,
    fleetSecret: SECRET,
    port: 0,
    brokerPort: 0,
    dataDir: deviceTlsHubDir,
    stateStore: new MemoryStateStore(),
    defaultMetrics: false,
    deviceNetworks: ['127.0.0.1/32'],
    logger: quiet,
    env,
  });
  const twinDevice = (id: string, extraArgs: string[], dataDir?: string) =>
    startDeviceProcess({
      deviceId: id,
      mqtt: deviceTlsHub.brokerUrl,
      image: join(packageRoot(), 'test', 'fixtures', 'images', 'mesh-camera.json'),
      layer: 'layer0',
      extraArgs,
      ...(dataDir ? { dataDir } : {}),
      env: { MESH_KEY: 'hub-tools-call-bench-mesh-key-0001', HEALTH_INTERVAL_MS: '60000', STATUS_INTERVAL_MS: '60000', LOOKOUT_LOG_LEVEL: 'warn' },
    });
  const plainDevice = await twinDevice(`${DEVICE_ID}-plain`, []);
  const tlsDevice = await twinDevice(`${DEVICE_ID}-tls`, ['--tool-tls'], deviceTlsRoot);
  const client = new Client({ name: 'hub-tools-call-bench', version: '1.0.0' });
  try {
    await waitFor(
      `${DEVICE_ID} registered with a tool URL`,
      async () => {
        try {
          return (await hubCall(hub.url, TOOL)).answer.status === 'ok';
        } catch {
          return false;
        }
      },
      20_000,
      100,
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(device.ready.tool_url!)));
    for (const h of [hub, asking]) {
      const enriched = (await hubCall(h.url, 'get_system_health')).answer;
      if (enriched._vms_enriched !== true) throw new Error(`get_system_health through the hub was not enriched: ${JSON.stringify(enriched)}`);
      if (enriched._vms_enrichment_missing) console.log(`enrichment fields missing (the device's own word): ${enriched._vms_enrichment_missing.join('; ')}`);
    }

    const [direct, proxied] = await alternate([() => directCall(client, TOOL), async () => (await hubCall(hub.url, TOOL)).ms]);
    const a = stats(direct.times);
    const b = stats(proxied.times);
    const overhead = b.median - a.median;
    console.log(`${CALLS} calls each after ${WARMUP} warm-up, alternating; the device is a lookout-edge process, the hubs in this process`);
    console.log(line(`(a) ${TOOL} direct (MCP SDK client, pooled)`, direct));
    console.log(line(`(b) ${TOOL} through POST /tools/call`, proxied));
    console.log(
      `overhead (b − a): median ${f(overhead)} ms (round by round ${f(pairedMedian(direct.times, proxied.times))} ms), p99 ${f(b.p99 - a.p99)} ms, cpu ${f(proxied.cpuMs - direct.cpuMs)} ms; aim <= ${AIM_MS} ms: ${overhead <= AIM_MS ? 'met' : 'NOT met'}`,
    );

    const [plainTwin, tlsTwin] = await alternate([async () => (await hubCall(plainHub.url, TOOL)).ms, async () => (await hubCall(tlsHub.url, TOOL)).ms]);
    const tlsOver = stats(tlsTwin.times).median - stats(plainTwin.times).median;
    console.log(line(`(d) ${TOOL} through a hub on plain HTTP (registry)`, plainTwin));
    console.log(line(`    the same through its twin on HTTPS (${tlsHub.url.split(':')[0]})`, tlsTwin));
    console.log(
      `TLS overhead (HTTPS − HTTP, kept-alive): median ${f(tlsOver)} ms (round by round ${f(pairedMedian(plainTwin.times, tlsTwin.times))} ms), p99 ${f(stats(tlsTwin.times).p99 - stats(plainTwin.times).p99)} ms, cpu ${f(tlsTwin.cpuMs - plainTwin.cpuMs)} ms; aim <= ${TLS_AIM_MS} ms: ${tlsOver <= TLS_AIM_MS ? 'met' : 'NOT met'}`,
    );

    for (const id of [`${DEVICE_ID}-plain`, `${DEVICE_ID}-tls`]) {
      await waitFor(
        `${id} registered with a tool URL`,
        async () => (await hubCall(deviceTlsHub.url, TOOL, id).catch(() => null))?.answer.status === 'ok',
        20_000,
        100,
      );
    }
    if (!tlsDevice.ready.tool_url?.startsWith('https:')) throw new Error(`the device of (e) does not serve https: ${tlsDevice.ready.tool_url}`);
    const [plainDev, tlsDev] = await alternate([
      async () => (await hubCall(deviceTlsHub.url, TOOL, `${DEVICE_ID}-plain`)).ms,
      async () => (await hubCall(deviceTlsHub.url, TOOL, `${DEVICE_ID}-tls`)).ms,
    ]);
    const devTlsOver = stats(tlsDev.times).median - stats(plainDev.times).median;
    console.log(line(`(e) ${TOOL} through a hub to a device on plain HTTP`, plainDev));
    console.log(line(`    the same to its twin device on HTTPS (pinned)`, tlsDev));
    console.log(
      `device TLS overhead (hub → device HTTPS − HTTP, kept-alive): median ${f(devTlsOver)} ms (round by round ${f(pairedMedian(plainDev.times, tlsDev.times))} ms), p99 ${f(stats(tlsDev.times).p99 - stats(plainDev.times).p99)} ms, hub cpu ${f(tlsDev.cpuMs - plainDev.cpuMs)} ms; aim <= ${TLS_AIM_MS} ms: ${devTlsOver <= TLS_AIM_MS ? 'met' : 'NOT met'}`,
    );

    const identityCalls = await identityCallsOf(hub.url);
    const [enriched, enrichedAsking, health, identity, mesh] = await alternate([
      async () => (await hubCall(hub.url, 'get_system_health')).ms,
      async () => (await hubCall(asking.url, 'get_system_health')).ms,
      () => directCall(client, 'get_system_health'),
      () => directCall(client, 'get_device_identity'),
      () => directCall(client, 'get_peer_mesh_status'),
    ]);
    const asked = (await identityCallsOf(hub.url)) - identityCalls;
    const h = stats(health.times);
    const slowest = Math.max(stats(identity.times).median, stats(mesh.times).median);
    console.log(line('(c) get_system_health through the hub, enriched', enriched));
    console.log(line('    the same, identity asked every time (cache 0)', enrichedAsking));
    console.log(line('    get_system_health direct', health));
    console.log(line('    get_device_identity direct', identity));
    console.log(line('    get_peer_mesh_status direct', mesh));
    console.log(`    the hub asked get_device_identity ${asked} times for ${WARMUP + CALLS} enriched answers (LOOKOUT_HUB_IDENTITY_CACHE_MS, default 30 s)`);
    for (const [name, s] of [
      ['enriched', enriched],
      ['enriched, identity asked every time', enrichedAsking],
    ] as const) {
      const over = stats(s.times).median - h.median;
      console.log(
        `${name}: overhead (− direct health) median ${f(over)} ms (round by round ${f(pairedMedian(health.times, s.times))} ms); slowest enrichment call direct ${f(slowest)} ms; aim overhead <= slowest: ${over <= slowest ? 'met' : 'NOT met'}`,
      );
    }
    if (leakWarnings > 0) {
      console.log(
        `note: the direct SDK client (global fetch) drew ${leakWarnings} MaxListenersExceededWarning: fetch leaves an abort listener on its transport's lifelong signal per request until GC`,
      );
    }
  } finally {
    agent.destroy();
    tlsAgent?.destroy();
    await client.close().catch(() => undefined);
    await plainHub.close();
    await tlsHub.close();
    await plainDevice.stop();
    await tlsDevice.stop();
    await deviceTlsHub.close();
    await plainBus.close();
    await tlsBus.close();
    await device.stop();
    await asking.close();
    await bus.close();
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** get_device_identity calls the hub made (its tool-call counter, every outcome). */
async function identityCallsOf(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^lookout_hub_tool_calls_total\{tool="get_device_identity",outcome="[^"]*"\} (\d+)/gm)) n += Number(m[1]);
  return n;
}

await main();
