/**
 * The soak of issue 11 ("Done means", last bullet): for a bounded time, on 127.0.0.1 only,
 *
 * - mosquitto (persistence on) as the external broker, restarted twice while devices publish;
 * - `lookout-hub --mqtt` as a child process, restarted once;
 * - a fleet of `--devices` (default 200): a few real `lookout-edge --source sim` processes with
 *   their tool servers, the rest simulated here as MQTT clients (the project's MqttBus) publishing
 *   spec-shaped status, telemetry, dets and health at QoS 1, each with a per-topic sequence number;
 * - a hostile client flooding malformed, oversized, deeply nested and unknown-topic messages, and
 *   malformed HTTP requests;
 * - bursts of 100 concurrent `POST /tools/call` per real device (429 is a correct answer);
 * - an independent subscriber (the witness) that tells a loss in the broker from one in the hub.
 *
 * Checked: no process crashed, no 5xx, RSS under its bound (figures printed), no QoS 1 message
 * lost, and every per-topic count `GET /fleet/mqtt/latest` shows for a simulated device equals what
 * the device published: since the first hub started when the restarted hub reloaded its saved cache
 * (issue 11, item 8; its reloaded counts must equal those shown before the restart), or since the
 * restart, plus the retained status it receives on subscribing, when it started empty. Publishing
 * pauses for the hub restart, so that counts are compared at a point where every one is known; it
 * goes on through the broker restarts. Exit 0 when every bound held, 1 when one broke, 2 on a setup
 * failure or when the run overran its own deadline.
 *
 *   npm run soak                                   (10 minutes, 200 devices)
 *   node dist/test/soak/soak.js --minutes 2 --devices 50
 */
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDeviceProcess, type DeviceProcess } from '../support/device-process.js';
import { freePort } from '../support/free-port.js';
import { startMosquitto, type Mosquitto } from '../support/mosquitto.js';
import { HttpFlooder, MqttFlooder } from './flooder.js';
import { startHubProcess, type HubProcess } from './hub-process.js';
import { HttpStats } from './http-stats.js';
import { RssMonitor } from './proc-stats.js';
import { checkSimMessages, SIM_KINDS, SimFleet, type SimKind } from './sim-fleet.js';
import { parseSoakOptions, SOAK_USAGE, type SoakOptions } from './soak-options.js';
import { percentile, TOOL, ToolBursts } from './tool-bursts.js';
import { Witness } from './witness.js';

/** mosquitto's per-client queue: the hub may fall this far behind before the broker drops QoS 1 messages. */
const BROKER_MAX_QUEUED = 20_000;

interface LifetimeResult {
  lifetime: number;
  /** Why the comparison was made: before a hub restart, or at the end. */
  at: string;
  settledInMs: number | null;
  perKind: Record<SimKind, { expected: number; hub: number; lost: number; extra: number; devicesOff: number }>;
  /** Of the device/topic counts above the device's own, those where the witness saw a duplicate too. */
  extraAlsoAtWitness: number;
  mismatches: string[];
}

interface RestartRecord {
  what: string;
  at: number;
  downMs: number;
  notes: string[];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mb = (n: number | null | undefined) => (n === null || n === undefined ? '-' : n.toFixed(0));

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

class Soak {
  readonly failures: string[] = [];
  readonly notes: string[] = [];
  readonly restarts: RestartRecord[] = [];
  readonly lifetimes: LifetimeResult[] = [];
  readonly rss = new RssMonitor();
  private readonly cleanups: (() => Promise<unknown>)[] = [];
  private readonly startedAt = Date.now();
  private publishStartedAt = 0;
  private broker!: Mosquitto;
  private hub!: HubProcess;
  private hubLifetime = 0;
  private readonly hubErrors: string[] = [];
  private hubErrorCount = 0;
  private readonly hubErrorGroups = new Map<string, number>();
  private readonly hubWarns = new Map<string, number>();
  private http!: HttpStats;
  private sims!: SimFleet;
  private witness!: Witness;
  private flooder!: MqttFlooder;
  private httpFlooder!: HttpFlooder;
  private tools!: ToolBursts;
  private readonly devices: DeviceProcess[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  /** Per simulated device and topic: `sent` at the start of the current hub lifetime. */
  private base = new Map<string, number>();
  /** Per simulated device: retained statuses the current hub received on subscribing. */
  private retainedAtStart = new Map<string, number>();
  /** Witness counts of the real devices at the start of the current hub lifetime. */
  private realBase = new Map<string, number>();
  private lastIngest: any = null;
  /** Hub lifetimes that reloaded the previous one's cache. */
  private readonly restoredLifetimes = new Set<number>();
  /** Per simulated device and topic: the hub's counts at the last comparison. */
  private lastCounts: Map<string, number> | null = null;
  /** Set once the soak stops its processes: an exit from then on is no crash. */
  private stopping = false;
  private overCountEvents = 0;
  private madeUpSeen = new Set<string>();
  private pollFailures = 0;
  private readonly pollSamples: string[] = [];
  private dir = '';
  private hubArgs: string[] = [];
  private readonly simIds: string[];
  private readonly realIds: string[];

  constructor(private readonly o: SoakOptions) {
    const simCount = o.devices - o.realDevices;
    this.realIds = Array.from({ length: o.realDevices }, (_, i) => `soak-real-${i + 1}`);
    this.simIds = Array.from({ length: simCount }, (_, i) => `soak-sim-${String(i + 1).padStart(4, '0')}`);
  }

  fail(message: string): void {
    this.failures.push(message);
    log(`  FAIL ${message}`);
  }

  elapsed(): string {
    return `${Math.round((Date.now() - (this.publishStartedAt || this.startedAt)) / 1000)
      .toString()
      .padStart(4)}s`;
  }

  async setUp(): Promise<void> {
    const o = this.o;
    checkSimMessages();
    this.dir = mkdtempSync(join(tmpdir(), 'lookout-soak-'));
    this.cleanups.push(async () => rmSync(this.dir, { recursive: true, force: true }));

    // Without connection messages: 200 clients reconnecting log more than the 400 lines
    // test/support/mosquitto.ts keeps, and its start check would lose the "running" line.
    this.broker = await startMosquitto({ persistence: true, maxQueuedMessages: BROKER_MAX_QUEUED, extraConfig: ['connection_messages false'] });
    this.cleanups.push(() => this.broker.stop());
    this.rss.watch('broker', this.broker.pid);
    this.rss.watch('soak', process.pid, 'soak (this process)');
    log(`broker  mosquitto pid ${this.broker.pid} at ${this.broker.url} (persistence, max_queued_messages ${BROKER_MAX_QUEUED})`);

    // The witness subscribes before anything publishes: it sees every message from the first.
    this.witness = new Witness(new Set(this.simIds), new Set(this.realIds));
    await this.witness.start(this.broker.url);
    this.cleanups.push(() => this.witness.close());

    const toolPorts = await Promise.all(this.realIds.map(() => freePort()));
    const registry = {
      bus_id: 'soak',
      devices: [
        ...this.realIds.map((id, i) => ({ device_id: id, ips: ['127.0.0.1'], tool_port: toolPorts[i], labels: ['soak_cam'] })),
        ...this.simIds.map((id) => ({ device_id: id, labels: ['soak_cam'] })),
      ],
    };
    const registryFile = join(this.dir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify(registry, null, 2));
    this.hubArgs = ['--mqtt', this.broker.url, '--port', '0', '--data-dir', join(this.dir, 'hub'), '--registry', registryFile, '--log-level', 'warn'];
    await this.startHub();
    this.cleanups.push(() => this.hub.stop());

    log(`devices ${o.realDevices} lookout-edge --source sim, ${this.simIds.length} simulated`);
    const started = await Promise.all(
      this.realIds.map((id, i) =>
        startDeviceProcess({ deviceId: id, mqtt: this.broker.url, toolPort: toolPorts[i], env: { LOOKOUT_LOG_LEVEL: 'warn' }, readyTimeoutMs: 30_000 }),
      ),
    );
    for (const d of started) {
      this.devices.push(d);
      this.rss.watch(`edge ${d.ready.device_id}`, d.child.pid, `edge ${d.ready.device_id}`);
      void d.exited.then((e) => {
        if (!this.stopping) this.fail(`${d.ready.device_id} exited (code ${e.code}, signal ${e.signal}):\n${d.logs().split('\n').slice(-15).join('\n')}`);
      });
    }
    this.cleanups.push(() => Promise.all(this.devices.map((d) => d.stop(5_000))));

    this.sims = new SimFleet(this.broker.url, this.simIds, o);
    const t = Date.now();
    await this.sims.connect();
    this.cleanups.push(() => this.sims.close());
    log(`        ${this.simIds.length} simulated devices connected in ${secs(Date.now() - t)}`);

    // The real devices answer tool calls through the hub before the clock starts.
    for (const id of this.realIds) await this.waitFor(`${id} reachable through the hub`, 30_000, () => this.toolCallOk(id));

    this.flooder = new MqttFlooder(this.broker.url, [...this.simIds, ...this.realIds], o.floodRate, o.seed);
    await this.flooder.start();
    this.cleanups.push(() => this.flooder.stop());
    this.httpFlooder = new HttpFlooder(this.http, o.httpFloodRate, this.realIds, this.simIds);
    this.tools = new ToolBursts(this.http, this.realIds, o.toolBurst);
  }

  async startHub(): Promise<void> {
    const t = Date.now();
    this.hub = await startHubProcess(this.hubArgs);
    this.hubLifetime++;
    const hub = this.hub;
    const lifetime = this.hubLifetime;
    void hub.exited.then((e) => {
      if (!hub.stopRequested)
        this.fail(`hub #${lifetime} (pid ${hub.pid}) exited unexpectedly (code ${e.code}, signal ${e.signal}):\n${hub.stderrTail().slice(-3000)}`);
    });
    if (this.http) this.http.reopen(hub.url);
    else this.http = new HttpStats(hub.url);
    this.rss.watch('hub', hub.pid);
    log(`hub     #${lifetime} pid ${hub.pid} at ${hub.url}, ready in ${secs(Date.now() - t)}`);
  }

  /**
   * A restarted hub that started empty counts from here: what each device sent so far is subtracted,
   * and the retained status it receives on subscribing is added.
   */
  rebase(): void {
    this.base = new Map();
    this.retainedAtStart = new Map();
    for (const d of this.sims.devices) {
      for (const kind of SIM_KINDS) this.base.set(`${d.id}/${kind}`, d.counters.get(kind)!.sent);
      this.retainedAtStart.set(d.id, d.counters.get('status')!.sent > 0 ? 1 : 0);
    }
    this.realBase = new Map();
    for (const id of this.realIds)
      for (const s of ['telemetry', 'dets', 'health', 'status', 'hello']) this.realBase.set(`${id}/${s}`, this.witness.realCount(id, s));
  }

  expected(deviceId: string, kind: SimKind): number {
    const d = this.sims.byId.get(deviceId)!;
    const sent = d.counters.get(kind)!.sent - (this.base.get(`${deviceId}/${kind}`) ?? 0);
    return sent + (kind === 'status' ? (this.retainedAtStart.get(deviceId) ?? 0) : 0);
  }

  async run(): Promise<void> {
    const o = this.o;
    const durationMs = o.minutes * 60_000;
    // The first hub counts from its start, before any device published: nothing to subtract.
    this.rss.start(2_000);
    this.publishStartedAt = Date.now();
    this.sims.start();
    this.httpFlooder.start();
    log(
      `\nsoak    ${o.minutes} min of publishing; ${this.plan(durationMs)
        .map((e) => `${e.what} at ${secs(e.at)}`)
        .join(', ')}\n`,
    );

    this.timers.push(setInterval(() => void this.tools.burst(), o.toolEverySec * 1000));
    this.timers.push(setInterval(() => void this.pollLight(), 5_000));
    this.timers.push(setInterval(() => void this.pollLatest(), 10_000));
    this.timers.push(setInterval(() => void this.pollHeavy(), 30_000));
    this.timers.push(setInterval(() => this.progress(), o.reportEverySec * 1000));
    void this.tools.burst();

    // Publishing time excludes the hub restart's pause: the end moves by the pause.
    let pausedMs = 0;
    for (const event of this.plan(durationMs)) {
      const wait = this.publishStartedAt + pausedMs + event.at - Date.now();
      if (wait > 0) await sleep(wait);
      if (event.what === 'broker restart') await this.restartBroker();
      else pausedMs += await this.restartHub();
    }
    const left = this.publishStartedAt + pausedMs + durationMs - Date.now();
    if (left > 0) await sleep(left);
    this.progress();
    await this.finish();
  }

  plan(durationMs: number): { what: 'broker restart' | 'hub restart'; at: number }[] {
    const b = this.o.brokerRestarts;
    const h = this.o.hubRestarts;
    const total = b + h;
    const hubSlots = new Set(Array.from({ length: h }, (_, j) => Math.round(((j + 1) * (total + 1)) / (h + 1)) - 1));
    return Array.from({ length: total }, (_, k) => ({
      what: hubSlots.has(k) ? ('hub restart' as const) : ('broker restart' as const),
      at: Math.round(((k + 1) * durationMs) / (total + 1)),
    }));
  }

  async restartBroker(): Promise<void> {
    const n = this.restarts.filter((r) => r.what.startsWith('broker')).length + 1;
    log(`${this.elapsed()} broker restart #${n}: pending before ${this.sims.pending()}`);
    const t = Date.now();
    const oldPid = this.broker.pid;
    await this.broker.restart();
    const downMs = Date.now() - t;
    this.rss.watch('broker', this.broker.pid);
    const notes = [`pid ${oldPid} → ${this.broker.pid}`, `listening again after ${secs(downMs)}`];
    const simsBack = await this.waitUntil(30_000, () => this.sims.devices.every((d) => d.bus.connected));
    notes.push(simsBack === null ? 'simulated devices NOT all reconnected within 30 s' : `simulated devices reconnected in ${secs(simsBack)}`);
    if (simsBack === null) this.fail(`broker restart #${n}: simulated devices not reconnected within 30 s`);
    const hubBack = await this.waitUntilAsync(
      30_000,
      async () => (await this.http.request('poll', 'GET', '/fleet/mqtt/config'))?.json?.ingest?.connected === true,
    );
    notes.push(hubBack === null ? 'hub NOT reconnected within 30 s' : `hub reconnected in ${secs(hubBack)}`);
    if (hubBack === null) this.fail(`broker restart #${n}: the hub's bus did not reconnect within 30 s`);
    this.restarts.push({ what: `broker restart #${n}`, at: t - this.publishStartedAt, downMs, notes });
    log(`${this.elapsed()} broker restart #${n}: ${notes.join('; ')}`);
  }

  /** Returns how long publishing was paused. */
  async restartHub(): Promise<number> {
    const n = this.hubLifetime;
    log(`${this.elapsed()} hub restart: pausing the simulated devices and the tool bursts`);
    const paused = Date.now();
    this.sims.pause();
    await this.tools.settle();
    if (!(await this.sims.waitAcked(this.o.drainSec * 1000)))
      this.fail(`hub restart: ${this.sims.pending()} publishes still without PUBACK after ${this.o.drainSec} s`);
    await this.compareLifetime(`before the hub restart`);
    this.http.close();
    if (!(await this.http.idle(30_000))) this.notes.push('hub restart: HTTP requests still in flight after 30 s');
    this.collectHubLogs();
    const t = Date.now();
    const exit = await this.hub.stop(10_000);
    if (exit.code !== 0) this.fail(`hub #${n} did not stop cleanly on SIGTERM (code ${exit.code}, signal ${exit.signal})`);
    await this.startHub();
    const notes = [`stopped in ${secs(Date.now() - t)} (exit ${exit.code ?? exit.signal})`];
    // A hub that saves its cache (issue 11, item 8) reloads its counts: they go on from the last
    // lifetime's. One that does not counts from zero, plus the retained status it now receives.
    const reloaded = await this.latest();
    const restored = reloaded !== null && this.simIds.some((id) => countOf(reloaded, id, 'telemetry') + countOf(reloaded, id, 'dets') > 0);
    if (!restored) {
      this.rebase();
      notes.push('the cache started empty: counts from zero');
    } else {
      this.restoredLifetimes.add(this.hubLifetime);
      let differ = 0;
      const samples: string[] = [];
      for (const id of this.simIds) {
        for (const k of ['telemetry', 'dets', 'health'] as const) {
          const before = this.lastCounts?.get(`${id}/${k}`) ?? 0;
          const now = countOf(reloaded, id, k);
          if (now !== before) {
            differ++;
            if (samples.length < 5) samples.push(`${id} ${k}: ${before} before, ${now} reloaded`);
          }
        }
      }
      notes.push(`the cache was reloaded: counts go on (${differ} device/topic counts differ from before the restart)`);
      if (differ > 0) this.fail(`hub #${this.hubLifetime} reloaded ${differ} counts that differ from those hub #${n} showed: ${samples.join('; ')}`);
    }
    const downMs = Date.now() - t;
    this.sims.resume();
    const pausedMs = Date.now() - paused;
    notes.push(`down ${secs(downMs)}`, `publishing paused ${secs(pausedMs)}`);
    this.restarts.push({ what: 'hub restart', at: paused - this.publishStartedAt, downMs, notes });
    log(`${this.elapsed()} hub restart: ${notes.join('; ')}`);
    return pausedMs;
  }

  /** Waits (bounded) until the hub counts every message the simulated devices sent this lifetime, then compares. */
  async compareLifetime(at: string): Promise<void> {
    const t = Date.now();
    let devices: Record<string, any> | null = null;
    let settledInMs: number | null = null;
    while (Date.now() - t < this.o.drainSec * 1000) {
      devices = await this.latest();
      if (devices && this.simIds.every((id) => SIM_KINDS.every((k) => countOf(devices!, id, k) >= this.expected(id, k)))) {
        settledInMs = Date.now() - t;
        break;
      }
      await sleep(1_000);
    }
    if (devices) {
      const snapshot = new Map<string, number>();
      for (const id of this.simIds) for (const k of SIM_KINDS) snapshot.set(`${id}/${k}`, countOf(devices, id, k));
      this.lastCounts = snapshot;
    }
    const perKind = {} as LifetimeResult['perKind'];
    const mismatches: string[] = [];
    let extraAlsoAtWitness = 0;
    for (const kind of SIM_KINDS) {
      const row = { expected: 0, hub: 0, lost: 0, extra: 0, devicesOff: 0 };
      for (const id of this.simIds) {
        const exp = this.expected(id, kind);
        const got = devices ? countOf(devices, id, kind) : 0;
        row.expected += exp;
        row.hub += got;
        if (got !== exp) {
          row.devicesOff++;
          if (got < exp) row.lost += exp - got;
          else {
            row.extra += got - exp;
            if ((this.witness.of(id, kind)?.duplicates ?? 0) > 0) extraAlsoAtWitness++;
          }
          if (mismatches.length < 20) {
            const w = this.witness.of(id, kind);
            mismatches.push(
              `${id} ${kind}: hub ${got}, device ${exp} (witness: ${w?.distinct ?? 0} distinct, ${w?.duplicates ?? 0} duplicates, ${w ? w.missing(this.sims.byId.get(id)!.counters.get(kind)!.sent) : '-'} missing)`,
            );
          }
        }
      }
      perKind[kind] = row;
    }
    if (this.restoredLifetimes.has(this.hubLifetime)) {
      const plusOne = this.simIds.filter((id) => devices !== null && countOf(devices, id, 'status') === this.expected(id, 'status') + 1).length;
      if (plusOne > 0)
        mismatches.unshift(
          `${plusOne} of ${this.simIds.length} devices: status one above the device's own: the retained status the restarted hub receives on subscribing is counted again on top of the reloaded count`,
        );
    }
    const result: LifetimeResult = { lifetime: this.hubLifetime, at, settledInMs, perKind, extraAlsoAtWitness, mismatches };
    this.lifetimes.push(result);
    const lost = SIM_KINDS.reduce((n, k) => n + perKind[k].lost, 0);
    const extra = SIM_KINDS.reduce((n, k) => n + perKind[k].extra, 0);
    log(
      `${this.elapsed()} hub #${this.hubLifetime} counts ${at}: ${SIM_KINDS.map((k) => `${k} ${perKind[k].hub}/${perKind[k].expected}`).join(', ')}` +
        (settledInMs !== null ? ` (settled in ${secs(settledInMs)})` : ` (NOT settled within ${this.o.drainSec} s)`),
    );
    if (devices === null) this.fail(`hub #${this.hubLifetime}: GET /fleet/mqtt/latest gave no answer ${at}`);
    else if (lost > 0 || extra > 0) {
      const what = `hub #${this.hubLifetime} ${at}: ${lost} messages fewer and ${extra} more than the devices published:\n    ${mismatches.join('\n    ')}`;
      if (lost > 0 || !this.o.allowDuplicates) this.fail(what);
      else this.notes.push(`${what}\n  (--allow-duplicates: QoS 1 duplicates are not failures)`);
    }
  }

  async finish(): Promise<void> {
    log(`${this.elapsed()} end of publishing: stopping the flood and the tool bursts, draining`);
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
    this.httpFlooder.stop();
    await this.flooder.stop();
    await this.tools.settle();
    this.sims.stopPublishing();
    if (!(await this.sims.waitAcked(this.o.drainSec * 1000)))
      this.fail(`end: ${this.sims.pending()} publishes still without PUBACK after ${this.o.drainSec} s`);
    await this.compareLifetime('at the end');
    await this.pollHeavy();
    this.rss.sample();
    this.rss.stop();
    await this.checkWitness();
    this.collectHubLogs();
  }

  /** What the broker delivered to the witness: every sequence number once (QoS 1 may duplicate). */
  async checkWitness(): Promise<void> {
    // The witness may lag the hub by a moment.
    await this.waitUntil(10_000, () =>
      this.sims.devices.every((d) => SIM_KINDS.every((k) => (this.witness.of(d.id, k)?.distinct ?? 0) >= d.counters.get(k)!.sent)),
    );
  }

  collectHubLogs(): void {
    if (!this.hub) return;
    const errors = this.hub.errorLines();
    if (errors.count > 0) {
      this.hubErrorCount += errors.count;
      for (const line of errors.first) if (this.hubErrors.length < 3) this.hubErrors.push(`hub #${this.hubLifetime}: ${line}`);
      for (const [msg, n] of errors.byMessage) this.hubErrorGroups.set(`hub #${this.hubLifetime}: ${msg}`, n);
    }
    for (const [msg, n] of this.hub.warnCounts()) this.hubWarns.set(`hub #${this.hubLifetime}: ${msg}`, n);
  }

  async latest(): Promise<Record<string, any> | null> {
    const a = await this.http.request('poll', 'GET', '/fleet/mqtt/latest', { timeoutMs: 30_000 });
    return a?.status === 200 && a.json && typeof a.json.devices === 'object' ? (a.json.devices as Record<string, any>) : null;
  }

  async pollLight(): Promise<void> {
    const health = await this.http.request('poll', 'GET', '/health');
    this.checkPoll('/health', health?.status);
    const config = await this.http.request('poll', 'GET', '/fleet/mqtt/config');
    this.checkPoll('/fleet/mqtt/config', config?.status);
    if (config?.status === 200) this.lastIngest = config.json?.ingest;
  }

  async pollLatest(): Promise<void> {
    const devices = await this.latest();
    if (!devices) return;
    const fleet = new Set([...this.simIds, ...this.realIds]);
    for (const id of Object.keys(devices)) {
      if (!fleet.has(id) && !this.madeUpSeen.has(id)) {
        this.madeUpSeen.add(id);
        this.fail(`a device the fleet does not have is in /fleet/mqtt/latest: ${id.slice(0, 100)}`);
      }
    }
    // A count above what the device has sent is a duplicate or a phantom: noted as it happens.
    for (const id of this.simIds) {
      for (const k of SIM_KINDS) if (countOf(devices, id, k) > this.expected(id, k)) this.overCountEvents++;
    }
  }

  async pollHeavy(): Promise<void> {
    const paths = [
      '/fleet/health',
      '/fleet/registry',
      '/debug/events?limit=100',
      '/metrics',
      '/openapi.json',
      `/fleet/mqtt/latest?device=${this.realIds[0] ?? 'x'}`,
    ];
    for (const path of paths) this.checkPoll(path, (await this.http.request('poll', 'GET', path))?.status);
  }

  checkPoll(path: string, status: number | undefined): void {
    if (status === undefined || status === 200) return;
    this.pollFailures++;
    if (this.pollSamples.length < 10) this.pollSamples.push(`${this.elapsed()} ${path}: ${status}`);
  }

  progress(): void {
    const totals = this.sims.totals();
    const sent = SIM_KINDS.reduce((n, k) => n + totals[k].sent, 0);
    const acked = SIM_KINDS.reduce((n, k) => n + totals[k].acked, 0);
    const ing = this.lastIngest;
    const t = this.tools.tally;
    const edges = this.realIds.map((id) => this.rss.latestMb(`edge ${id}`)).filter((x): x is number => x !== null);
    log(
      `${this.elapsed()} sent ${sent} (acked ${acked}, pending ${this.sims.pending()}) | hub#${this.hubLifetime} ` +
        (ing ? `valid ${ing.valid} invalid ${ing.invalid} ${Math.round(ing.rate_hz)}/s` : 'no ingest figures') +
        ` | flood mqtt ${this.flooder.total()} http ${this.http.total('flood')}` +
        ` | tools ok ${t.ok} 429 ${t.busy} err ${t.toolError + t.other4xx + t.noAnswer}` +
        ` | 5xx ${this.http.fiveXxCount}` +
        ` | rss MiB hub ${mb(this.rss.latestMb('hub'))} broker ${mb(this.rss.latestMb('broker'))} soak ${mb(this.rss.latestMb('soak'))}` +
        (edges.length ? ` edges ${mb(Math.min(...edges))}-${mb(Math.max(...edges))}` : ''),
    );
  }

  async toolCallOk(id: string): Promise<boolean> {
    const a = await this.http.request('setup', 'POST', `/tools/call?target=${encodeURIComponent(id)}`, {
      body: JSON.stringify({ tool: TOOL, arguments: {} }),
      headers: { 'content-type': 'application/json' },
    });
    return a?.status === 200 && a.json?.status === 'ok';
  }

  async waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
    if ((await this.waitUntilAsync(timeoutMs, check)) === null) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }

  /** Milliseconds until `check` held, or null after `timeoutMs`. */
  async waitUntil(timeoutMs: number, check: () => boolean): Promise<number | null> {
    return this.waitUntilAsync(timeoutMs, async () => check());
  }

  async waitUntilAsync(timeoutMs: number, check: () => Promise<boolean>): Promise<number | null> {
    const t = Date.now();
    for (;;) {
      if (await check().catch(() => false)) return Date.now() - t;
      if (Date.now() - t > timeoutMs) return null;
      await sleep(200);
    }
  }

  checkBounds(): void {
    const o = this.o;
    for (const row of this.rss.rows()) {
      const limit = row.role === 'hub' ? o.maxHubRssMb : row.role === 'broker' ? o.maxBrokerRssMb : row.role.startsWith('edge') ? o.maxDeviceRssMb : null;
      if (limit !== null && row.maxMb > limit) this.fail(`${row.label}: RSS reached ${row.maxMb.toFixed(0)} MiB, bound ${limit} MiB`);
    }
    if (this.http.fiveXxCount > 0)
      this.fail(
        `${this.http.fiveXxCount} answers were 5xx: ${[...this.http.fiveXxGroups].map(([k, g]) => `${g.count}× ${k} ${g.body.slice(0, 200)}`).join('; ')}`,
      );
    const t = this.tools.tally;
    if (t.toolError + t.other4xx + t.noAnswer > 0)
      this.fail(`tool calls: ${t.toolError} tool errors, ${t.other4xx} unexpected 4xx, ${t.noAnswer} without answer: ${t.samples.join(' | ')}`);
    if (o.toolBurst > 0 && this.realIds.length > 0 && t.ok === 0) this.fail('no tool call was answered ok');
    if (this.http.transportErrors > 0)
      this.fail(`${this.http.transportErrors} HTTP requests got no answer while the hub was meant to be up: ${this.http.transportSamples.join(' | ')}`);
    if (this.pollFailures > 0) this.fail(`${this.pollFailures} polls of the hub's routes were not 200: ${this.pollSamples.join(' | ')}`);
    const totals = this.sims.totals();
    for (const k of SIM_KINDS) {
      if (totals[k].failed > 0) this.fail(`${totals[k].failed} ${k} publishes failed`);
      if (totals[k].skipped > 0) this.fail(`${totals[k].skipped} ${k} publishes skipped (too many pending)`);
    }
    let witnessMissing = 0;
    for (const d of this.sims.devices)
      for (const k of SIM_KINDS) witnessMissing += this.witness.of(d.id, k)?.missing(d.counters.get(k)!.sent) ?? d.counters.get(k)!.sent;
    if (witnessMissing > 0) this.fail(`the witness subscriber never received ${witnessMissing} QoS 1 messages that the broker acknowledged`);
    if (this.hubErrorCount > 0) this.notes.push(`the hub logged ${this.hubErrorCount} error lines`);
  }

  report(): void {
    const o = this.o;
    const hr = '-'.repeat(100);
    log(
      `\n${hr}\nsoak report: ${o.minutes} min of publishing, ${o.devices} devices (${o.realDevices} lookout-edge + ${this.simIds.length} simulated), ` +
        `${o.brokerRestarts} broker restarts, ${o.hubRestarts} hub restarts; wall time ${secs(Date.now() - this.startedAt)}\n${hr}`,
    );

    const totals = this.sims.totals();
    log('\nQoS 1 messages of the simulated devices (hub: GET /fleet/mqtt/latest topics.<kind>.count, per hub lifetime)');
    const header = [
      'kind',
      'sent',
      'acked',
      ...this.lifetimes.flatMap((l) => [`hub#${l.lifetime}`, `dev#${l.lifetime}`]),
      'lost',
      'extra',
      'witness',
      'w.dup',
      'w.missing',
    ];
    const rows: string[][] = [header];
    for (const k of SIM_KINDS) {
      let wDistinct = 0;
      let wDup = 0;
      let wMissing = 0;
      for (const d of this.sims.devices) {
        const w = this.witness.of(d.id, k);
        wDistinct += w?.distinct ?? 0;
        wDup += w?.duplicates ?? 0;
        wMissing += w ? w.missing(d.counters.get(k)!.sent) : d.counters.get(k)!.sent;
      }
      rows.push([
        k,
        String(totals[k].sent),
        String(totals[k].acked),
        ...this.lifetimes.flatMap((l) => [String(l.perKind[k].hub), String(l.perKind[k].expected)]),
        String(this.lifetimes.reduce((n, l) => n + l.perKind[k].lost, 0)),
        String(this.lifetimes.reduce((n, l) => n + l.perKind[k].extra, 0)),
        String(wDistinct),
        String(wDup),
        String(wMissing),
      ]);
    }
    table(rows);
    log(
      "  (dev#n: what the devices published that hub n must count: since hub n started (plus the retained status it receives on subscribing) when it started empty, since the first hub's start when it reloaded the saved cache" +
        (this.restoredLifetimes.size > 0 ? `: hub(s) #${[...this.restoredLifetimes].join(', #')} reloaded it)` : ')'),
    );
    for (const l of this.lifetimes) {
      const off = SIM_KINDS.reduce((n, k) => n + l.perKind[k].devicesOff, 0);
      log(
        `  hub #${l.lifetime} ${l.at}: ${l.settledInMs !== null ? `settled in ${secs(l.settledInMs)}` : 'did NOT settle'}; ${off} device/topic counts off` +
          (off > 0 ? `, of which ${l.extraAlsoAtWitness} above the device's own where the witness saw a duplicate too (a QoS 1 resend by the publisher)` : ''),
      );
    }
    log(
      `  counts above the device's own seen while polling: ${this.overCountEvents}; reconnects of simulated devices ${this.sims.reconnects()}, sessions not resumed ${this.sims.sessionsLost()}`,
    );
    const w = this.witness.stats();
    log(
      `  witness: ${w.messagesIn} messages, ${w.connects} connects, session resumed at the last: ${w.sessionPresent}, flood payloads ignored ${this.witness.floodIgnored}`,
    );

    if (this.realIds.length > 0) {
      log(
        `\nreal devices: hub #${this.hubLifetime} counts vs. the witness since the hub's counts began (informational: the devices cannot pause, the boundary is approximate)`,
      );
      const realRows: string[][] = [['device', ...['telemetry', 'dets', 'health', 'status', 'hello'].flatMap((s) => [`${s} hub`, 'witness'])]];
      const last = this.lastLatest ?? {};
      for (const id of this.realIds) {
        realRows.push([
          id,
          ...['telemetry', 'dets', 'health', 'status', 'hello'].flatMap((s) => [
            String(last[id]?.topics?.[s]?.count ?? 0),
            String(this.witness.realCount(id, s) - (this.realBase.get(`${id}/${s}`) ?? 0)),
          ]),
        ]);
      }
      table(realRows);
    }

    log('\nflood (malformed MQTT messages sent, by kind; QoS 0 mostly, so the broker may drop some while restarting)');
    log(
      `  ${[...this.flooder.sent.entries()].map(([k, v]) => `${k} ${v}`).join(', ')}; ${(this.flooder.bytes / 1024 / 1024).toFixed(1)} MiB; skipped while offline ${this.flooder.skippedOffline}`,
    );
    const ing = this.lastIngest;
    if (ing) {
      log(
        `  hub #${this.hubLifetime} ingest: messages ${ing.messages}, valid ${ing.valid}, invalid ${ing.invalid}, devices ${ing.devices}, refused unknown devices ${ing.refused_unknown_devices}`,
      );
      log(`  invalid by reason: ${JSON.stringify(ing.invalid_by_reason)}`);
    }

    log('\nHTTP answers by category and status');
    for (const c of ['tools', 'flood', 'poll', 'setup']) log(`  ${c.padEnd(6)} ${this.http.summary(c)}`);
    log('  flood cases:');
    for (const [name, m] of this.httpFlooder.answers) log(`    ${name.padEnd(22)} ${[...m.entries()].map(([s, n]) => `${s}:${n}`).join(' ')}`);
    log(
      `  5xx: ${this.http.fiveXxCount}; no answer while the hub was up: ${this.http.transportErrors}; skipped during the hub restart: ${this.http.skippedWhileClosed}`,
    );

    const t = this.tools.tally;
    log(`\ntool calls (${TOOL}, ${o.toolBurst} concurrent per device per burst, ${this.realIds.length} devices)`);
    log(
      `  bursts ${t.bursts}: ok ${t.ok}, 429 ${t.busy}, tool error ${t.toolError}, other 4xx ${t.other4xx}, 5xx ${t.fiveXx}, no answer ${t.noAnswer}; ` +
        `ok latency p50 ${percentile(t.okMs, 0.5) ?? '-'} ms, p99 ${percentile(t.okMs, 0.99) ?? '-'} ms, max ${percentile(t.okMs, 1) ?? '-'} ms`,
    );
    for (const s of t.samples) log(`    ${s}`);

    log('\nrestarts');
    for (const r of this.restarts) log(`  ${r.what} at ${secs(r.at)}: ${r.notes.join('; ')}`);

    log('\nmemory (VmRSS of /proc/<pid>/status every 2 s, MiB; cpu: average % of one core over the lifetime)');
    const memRows: string[][] = [['process', 'pid', 'samples', 'min', 'p25', 'p50', 'p75', 'max', 'last', 'MiB/min 2nd half', 'cpu %']];
    for (const r of this.rss.rows()) {
      memRows.push([
        r.label,
        String(r.pid),
        String(r.samples),
        mb(r.minMb),
        mb(r.quartilesMb[0]),
        mb(r.quartilesMb[1]),
        mb(r.quartilesMb[2]),
        mb(r.maxMb),
        mb(r.lastMb),
        r.slopeMbPerMin.toFixed(1),
        r.cpuPct === null ? '-' : r.cpuPct.toFixed(0),
      ]);
    }
    table(memRows);
    log(`  bounds: hub ${o.maxHubRssMb} MiB, broker ${o.maxBrokerRssMb} MiB, lookout-edge ${o.maxDeviceRssMb} MiB`);

    log(`\nhub logs: ${this.hubErrorCount} error lines`);
    for (const [msg, n] of this.hubErrorGroups) log(`  ${n}× ${msg}`);
    for (const e of this.hubErrors) log(`  first: ${e.slice(0, 700)}`);
    const warns = [...this.hubWarns.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
    if (warns.length) log(`  warnings: ${warns.map(([m, n]) => `${n}× ${m}`).join(' | ')}`);
    for (const n of this.notes) log(`note: ${n}`);

    log(`\n${hr}`);
    if (this.failures.length === 0) log("PASS: no crash, no 5xx, memory within bounds, no QoS 1 message lost, every hub count equal to the device's own");
    else {
      log(`FAIL: ${this.failures.length} bound(s) broken`);
      for (const f of this.failures) log(`  - ${f.split('\n')[0]}`);
    }
    log(hr);
  }

  lastLatest: Record<string, any> | null = null;

  async readLastLatest(): Promise<void> {
    this.lastLatest = await this.latest();
  }

  /** After a failure in the run: no more load, so that the report reads still figures. */
  stopForReport(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
    this.httpFlooder.stop();
    void this.flooder.stop();
    this.sims.stopPublishing();
    this.rss.stop();
  }

  async cleanUp(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    this.rss.stop();
    for (const c of this.cleanups.reverse()) {
      await Promise.race([c().catch((err: unknown) => log(`cleanup: ${(err as Error).message}`)), sleep(15_000)]);
    }
  }
}

function countOf(devices: Record<string, any>, id: string, kind: SimKind): number {
  const c = devices[id]?.topics?.[kind]?.count;
  return typeof c === 'number' ? c : 0;
}

function table(rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const [n, r] of rows.entries()) {
    log(`  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')}`);
    if (n === 0) log(`  ${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  }
}

async function main(): Promise<number> {
  let o: SoakOptions;
  try {
    o = parseSoakOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`soak: ${(err as Error).message}\n\n${SOAK_USAGE}`);
    return 2;
  }
  if (o.help) {
    process.stdout.write(SOAK_USAGE);
    return 0;
  }
  if (!existsSync('/proc/self/status')) {
    process.stderr.write('soak: needs /proc (Linux) to read RSS\n');
    return 2;
  }
  const soak = new Soak(o);
  // Whatever happens, the run ends: publishing time, the hub restart's pause, draining and setup.
  const deadlineMs = o.minutes * 60_000 + (o.hubRestarts + 2) * o.drainSec * 1000 + 5 * 60_000;
  let overran = false;
  const deadline = setTimeout(() => {
    overran = true;
    log(`soak: overran its deadline of ${secs(deadlineMs)}: stopping everything`);
    void soak.cleanUp().finally(() => process.exit(2));
  }, deadlineMs);
  const onSignal = (signal: NodeJS.Signals) => {
    log(`soak: ${signal}: stopping everything`);
    void soak.cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let code = 0;
  try {
    await soak.setUp();
    try {
      await soak.run();
    } catch (err) {
      // What ran so far is still reported.
      soak.fail(`the run stopped early: ${(err as Error).stack ?? String(err)}`);
      soak.stopForReport();
    }
    await soak.readLastLatest();
    soak.checkBounds();
    soak.report();
    code = soak.failures.length === 0 ? 0 : 1;
  } catch (err) {
    log(`soak: ${(err as Error).stack ?? String(err)}`);
    code = 2;
  } finally {
    await soak.cleanUp();
    clearTimeout(deadline);
  }
  return overran ? 2 : code;
}

// Explicitly: an idle keep-alive socket must not hold the process once everything is stopped.
process.exit(await main());
