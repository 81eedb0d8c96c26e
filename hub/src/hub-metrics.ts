import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { deviceGaugesText, type DeviceGaugeSample } from 'lookout/lib/metrics';

type IncOnly = { inc(value?: number): void };
type ObserveOnly = { observe(value: number): void };

/** Tool names come from clients; past this many distinct names, the rest share one label. */
const MAX_TOOL_LABELS = 64;
/** Known tool names are the devices' own, but a device's list is data too: bounded as well. */
const MAX_KNOWN_TOOL_LABELS = 512;
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const RATE_WINDOW_SEC = 10;
/**
 * prom-client's default metrics include gauges named `*_total` (the sums of the per-type gauges
 * beside them), which promtool rejects: `_total` is the counter suffix. Their per-type gauges stay.
 */
const GAUGES_NAMED_TOTAL = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** Which tool names may become label values: a set of names, or a test the caller supplies. */
export type KnownTools = Iterable<string> | ((tool: string) => boolean);

/**
 * The hub's Prometheus metrics, on a registry of its own (several hubs may share a process in
 * tests). Label children are cached because ingest runs at thousands of messages per second.
 */
export class HubMetrics {
  readonly registry = new Registry();
  private readonly ingestMessages: Counter<'topic'>;
  private readonly ingestInvalid: Counter<'topic' | 'reason'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly toolDuration: Histogram<'tool' | 'outcome'>;
  private readonly toolCalls: Counter<'tool' | 'outcome'>;
  private readonly children = new Map<string, IncOnly | ObserveOnly>();
  /** Messages per contract since the last scrape: counted here, handed to prom-client when it collects (a label hash per message is not free). */
  private readonly ingestPending = new Map<string, { n: number }>();
  private readonly toolNames = new Set<string>();
  /** Set by setKnownTools: then only these names are labels, whoever calls first. */
  private knownTool: ((tool: string) => boolean) | undefined;
  /** Messages per second over the last seconds, for a rate without a Prometheus server. */
  private readonly buckets = new Float64Array(RATE_WINDOW_SEC + 1);
  private bucketSecond = 0;
  /** Where the per-device gauges read the known devices (the fleet-health plugin sets it). */
  private deviceSource: (() => Iterable<DeviceGaugeSample>) | undefined;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics !== false) {
      collectDefaultMetrics({ register: this.registry, prefix: 'lookout_hub_' });
      for (const name of GAUGES_NAMED_TOTAL) this.registry.removeSingleMetric(`lookout_hub_${name}`);
    }
    this.ingestMessages = new Counter({
      name: 'lookout_hub_ingest_messages_total',
      help: 'Bus messages ingested, valid or not, by topic contract',
      labelNames: ['topic'],
      registers,
      collect: () => this.flushIngested(),
    });
    this.ingestInvalid = new Counter({
      name: 'lookout_hub_ingest_invalid_total',
      help: 'Bus messages refused (not JSON, oversized, too deep, schema, unknown topic), by topic contract and reason',
      labelNames: ['topic', 'reason'],
      registers,
    });
    const ingestRate = () => this.ingestRate();
    new Gauge({
      name: 'lookout_hub_ingest_rate_per_second',
      help: `Bus messages ingested per second over the last ${RATE_WINDOW_SEC} s`,
      registers,
      // Computed at scrape time from the per-second buckets.
      collect(this: Gauge) {
        this.set(ingestRate());
      },
    });
    this.httpDuration = new Histogram({
      name: 'lookout_hub_http_request_duration_seconds',
      help: 'HTTP route latency, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.toolDuration = new Histogram({
      name: 'lookout_hub_tool_call_duration_seconds',
      help: 'Forwarded tool call latency, by tool and outcome',
      labelNames: ['tool', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.toolCalls = new Counter({
      name: 'lookout_hub_tool_calls_total',
      help: 'Forwarded tool calls, by tool and outcome',
      labelNames: ['tool', 'outcome'],
      registers,
    });
  }

  setDeviceSource(source: () => Iterable<DeviceGaugeSample>): () => void {
    this.deviceSource = source;
    return () => {
      if (this.deviceSource === source) this.deviceSource = undefined;
    };
  }

  /**
   * A replica's gauges, read from `status` at each scrape and labelled with its shared-subscription
   * group: 1 while it shows the past (Redis away, or reading the shared stream behind its end), and
   * how far behind that end it reads. Only a replica has them: a single hub exports no replica series.
   */
  setReplicaSource(group: string, status: () => { stale: boolean; readLagMs: number | null }): void {
    const registers = [this.registry];
    new Gauge({
      name: 'lookout_hub_replica_stale',
      help: 'Whether this replica answers from a state that may be behind the others (1) or not (0)',
      labelNames: ['group'],
      registers,
      collect(this: Gauge<'group'>) {
        this.set({ group }, status().stale ? 1 : 0);
      },
    });
    new Gauge({
      name: 'lookout_hub_replica_read_lag_seconds',
      help: "How far behind the shared ingest stream's newest entry this replica reads (stream time, sampled each second)",
      labelNames: ['group'],
      registers,
      collect(this: Gauge<'group'>) {
        const lag = status().readLagMs;
        // No sample (Redis away; the stale gauge says 1): no series, not a zero that would say "caught up".
        if (lag === null) this.reset();
        else this.set({ group }, lag / 1000);
      },
    });
  }

  /** Per bus message: a map lookup and two additions (`now` is the caller's clock reading); the counter hears of them when scraped. */
  ingested(topic: string, now = Date.now()): void {
    const pending = this.ingestPending.get(topic);
    if (pending) pending.n++;
    else this.ingestPending.set(topic, { n: 1 });
    this.tick(Math.floor(now / 1000));
  }

  private flushIngested(): void {
    for (const [topic, pending] of this.ingestPending) {
      if (pending.n === 0) continue;
      this.ingestMessages.inc({ topic }, pending.n);
      pending.n = 0;
    }
  }

  invalid(topic: string, reason: string): void {
    this.child(`i|${topic}|${reason}`, () => this.ingestInvalid.labels({ topic, reason })).inc();
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `h|${method}|${route}|${status}`;
    this.child<ObserveOnly>(key, () => this.httpDuration.labels({ method, route, status: String(status) })).observe(seconds);
  }

  toolCall(tool: string, outcome: string, seconds: number): void {
    const label = this.toolLabel(tool);
    this.child<ObserveOnly>(`t|${label}|${outcome}`, () => this.toolDuration.labels({ tool: label, outcome })).observe(seconds);
    this.child<IncOnly>(`c|${label}|${outcome}`, () => this.toolCalls.labels({ tool: label, outcome })).inc();
  }

  /**
   * Takes the `tool` label's values only from the tools the caller knows (those the devices
   * declare): any other name is counted as `other`, so junk names neither grow the series nor push
   * real tools out. Until it is called, the first names seen become labels (up to a bound).
   */
  setKnownTools(known: KnownTools): void {
    if (typeof known === 'function') this.knownTool = known;
    else {
      const names = new Set(known);
      this.knownTool = (tool) => names.has(tool);
    }
    this.toolNames.clear();
  }

  /** Messages per second over the last full seconds. */
  ingestRate(): number {
    const now = Math.floor(Date.now() / 1000);
    this.tick(now, 0);
    let sum = 0;
    for (let s = now - RATE_WINDOW_SEC; s < now; s++) sum += this.buckets[s % this.buckets.length] ?? 0;
    return sum / RATE_WINDOW_SEC;
  }

  /** prom-client's registry, then the per-device gauges (written apart: deviceGaugesText), in the registry's text format. */
  async text(): Promise<{ body: string; contentType: string }> {
    const body = `${await this.registry.metrics()}\n${deviceGaugesText(this.deviceSource?.() ?? [])}`;
    return { body, contentType: this.registry.contentType };
  }

  private tick(second: number, add = 1): void {
    const size = this.buckets.length;
    if (second !== this.bucketSecond) {
      // Clear the seconds that passed without messages, at most the whole window.
      const gap = Math.min(second - this.bucketSecond, size);
      for (let i = 1; i <= gap; i++) this.buckets[(this.bucketSecond + i) % size] = 0;
      this.bucketSecond = second;
    }
    this.buckets[second % size] += add;
  }

  private toolLabel(tool: string): string {
    if (this.toolNames.has(tool)) return tool;
    const known = this.knownTool;
    const bound = known ? MAX_KNOWN_TOOL_LABELS : MAX_TOOL_LABELS;
    if (this.toolNames.size < bound && TOOL_NAME.test(tool) && (!known || known(tool))) {
      this.toolNames.add(tool);
      return tool;
    }
    return 'other';
  }

  private child<T extends IncOnly | ObserveOnly>(key: string, make: () => T): T {
    let c = this.children.get(key);
    if (!c) {
      c = make();
      this.children.set(key, c);
    }
    return c as T;
  }
}
