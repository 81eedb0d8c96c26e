import { connect as netConnect } from 'node:net';
import { connect, type MqttClient } from 'mqtt';
import { seededRandom, type Random } from '../../lib/random/seeded-random.js';
import type { HttpStats } from './http-stats.js';
import { simMessage, SIM_KINDS, type SimKind } from './sim-fleet.js';

const KiB = 1024;
/** The hub's default message limit (--max-message-bytes). */
const HUB_MAX_MESSAGE = 256 * KiB;
/** Oversized messages may take at most this many bytes per second of the flood. */
const OVERSIZED_BYTES_PER_SEC = 1024 * KiB;
/** Retained junk goes to at most this many made-up topics (the broker keeps each). */
const MAX_RETAINED_JUNK_TOPICS = 50;

export type FloodKind =
  | 'random_bytes'
  | 'truncated_json'
  | 'deep_nesting'
  | 'oversized'
  | 'unknown_topic'
  | 'long_topic'
  | 'wrong_types'
  | 'foreign_device_id'
  | 'made_up_device'
  | 'retained_junk'
  | 'empty'
  | 'bom_and_nul';

const KINDS: FloodKind[] = [
  'random_bytes',
  'truncated_json',
  'deep_nesting',
  'oversized',
  'unknown_topic',
  'long_topic',
  'wrong_types',
  'foreign_device_id',
  'made_up_device',
  'retained_junk',
  'empty',
  'bom_and_nul',
];

/**
 * A hostile bus client: malformed JSON, random bytes, oversized payloads, deep nesting, unknown and
 * overlong topics, wrong types, messages naming another device, valid messages of made-up devices,
 * retained junk. Nothing it sends may be valid for a device of the fleet (the counts would be off):
 * never a valid message on a fleet topic, never a valid hello, never retained on a fleet topic.
 */
export class MqttFlooder {
  readonly sent = new Map<FloodKind, number>();
  skippedOffline = 0;
  bytes = 0;
  private client: MqttClient | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly rand: Random;
  private oversizedBudget = OVERSIZED_BYTES_PER_SEC;
  private retainedJunk = 0;

  constructor(
    private readonly url: string,
    private readonly fleetIds: string[],
    private readonly perSecond: number,
    seed: number,
  ) {
    this.rand = seededRandom(seed);
  }

  async start(): Promise<void> {
    if (this.perSecond === 0) return;
    this.client = connect(this.url, {
      clientId: 'soak-flooder',
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 500,
      connectTimeout: 5_000,
      queueQoSZero: false,
    });
    this.client.on('error', () => undefined); // refused while the broker restarts: it reconnects
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the flooder could not connect within 10 s')), 10_000);
      this.client!.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const perTick = this.perSecond / 10;
    let carry = 0;
    let tick = 0;
    this.timer = setInterval(() => {
      if (++tick % 10 === 0) this.oversizedBudget = OVERSIZED_BYTES_PER_SEC;
      carry += perTick;
      const n = Math.floor(carry);
      carry -= n;
      for (let i = 0; i < n; i++) this.sendOne();
    }, 100);
  }

  total(): number {
    let n = 0;
    for (const v of this.sent.values()) n += v;
    return n;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const client = this.client;
    if (!client) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        client.end(true);
        resolve();
      }, 3_000);
      client.end(false, {}, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private sendOne(): void {
    const client = this.client!;
    if (!client.connected) {
      this.skippedOffline++;
      return;
    }
    let kind = this.pick(KINDS);
    if (kind === 'oversized' && this.oversizedBudget < 2 * HUB_MAX_MESSAGE) kind = 'truncated_json';
    if (kind === 'retained_junk' && this.retainedJunk >= MAX_RETAINED_JUNK_TOPICS * 20) kind = 'random_bytes';
    const { topic, payload, retain } = this.build(kind);
    const qos = this.rand.chance(0.1) ? 1 : 0;
    // QoS 1 messages waiting for PUBACK stay bounded: past a few hundred, the flood sends QoS 0.
    const inflight = (client as unknown as { outgoing?: Record<string, unknown> }).outgoing;
    const safeQos = qos === 1 && inflight && Object.keys(inflight).length > 500 ? 0 : qos;
    client.publish(topic, payload, { qos: safeQos, retain }, () => undefined);
    this.sent.set(kind, (this.sent.get(kind) ?? 0) + 1);
    this.bytes += payload.length;
  }

  private build(kind: FloodKind): { topic: string; payload: Buffer; retain: boolean } {
    const r = this.rand;
    const device = this.pick(this.fleetIds);
    const suffix: SimKind = this.pick(SIM_KINDS);
    const fleetTopic = `devices/${device}/${suffix}`;
    const valid = JSON.stringify(simMessage(suffix, `flood-${device}`, 1));
    switch (kind) {
      case 'random_bytes':
        return {
          topic: fleetTopic,
          payload: Buffer.from(Array.from({ length: 1 + Math.floor(r.next() * 500) }, () => Math.floor(r.next() * 256))),
          retain: false,
        };
      case 'truncated_json':
        return { topic: fleetTopic, payload: Buffer.from(valid.slice(0, 1 + Math.floor(r.next() * (valid.length - 2)))), retain: false };
      case 'deep_nesting': {
        const depth = 40 + Math.floor(r.next() * 5000);
        const open = r.chance(0.5) ? '[' : '{"a":';
        const close = open === '[' ? ']' : '}';
        return {
          topic: fleetTopic,
          payload: Buffer.from(`{"timestamp":"${new Date().toISOString()}","n":${open.repeat(depth)}1${close.repeat(depth)}}`),
          retain: false,
        };
      }
      case 'oversized': {
        const size = HUB_MAX_MESSAGE + 1 + Math.floor(r.next() * 3 * HUB_MAX_MESSAGE);
        this.oversizedBudget -= size;
        const body = valid.slice(0, -1) + `,"pad":"${'x'.repeat(Math.max(0, size - valid.length - 10))}"}`;
        return { topic: fleetTopic, payload: Buffer.from(body), retain: false };
      }
      case 'unknown_topic': {
        const topics = [
          `devices/${device}/telemetry/x${Math.floor(r.next() * 7)}`,
          `devices/${device}/junk`,
          `devices/${device}/dets/extra`,
          `devices/${device}`,
        ];
        return { topic: this.pick(topics), payload: Buffer.from(valid), retain: false };
      }
      case 'long_topic':
        return { topic: `devices/${device}/${'t'.repeat(520 + Math.floor(r.next() * 4000))}`, payload: Buffer.from(valid), retain: false };
      case 'wrong_types': {
        const m = JSON.parse(valid) as Record<string, any>;
        if (suffix === 'telemetry') m.telemetry = { die_temp: 'hot', fps: 'ten' };
        else if (suffix === 'dets') m.person_count = -1;
        else if (suffix === 'health') m.storage_health = 'FINE';
        else m.state = 'maybe';
        m.timestamp = this.pick([42, null, 'yesterday', '2026-01-01T00:00:00+02:00', m.timestamp]);
        return { topic: fleetTopic, payload: Buffer.from(JSON.stringify(m)), retain: false };
      }
      case 'foreign_device_id': {
        // A status or health on one device's topic naming another: refused (never re-registers it).
        const other = this.pick(this.fleetIds);
        const k: SimKind = r.chance(0.5) ? 'status' : 'health';
        const m = simMessage(k, other === device ? `${other}-x` : other, 1);
        return { topic: `devices/${device}/${k}`, payload: Buffer.from(JSON.stringify(m)), retain: false };
      }
      case 'made_up_device': {
        const id = `made-up-${Math.floor(r.next() * 100_000)}`;
        return { topic: `devices/${id}/${suffix}`, payload: Buffer.from(JSON.stringify(simMessage(suffix, id, 1))), retain: false };
      }
      case 'retained_junk': {
        this.retainedJunk++;
        const id = `junk-${Math.floor(r.next() * MAX_RETAINED_JUNK_TOPICS)}`;
        const payload = r.chance(0.5) ? Buffer.from('{"state":') : Buffer.from(JSON.stringify(simMessage('status', id, 1)));
        return { topic: `devices/${id}/status`, payload, retain: true };
      }
      case 'empty':
        return { topic: fleetTopic, payload: Buffer.alloc(0), retain: false };
      case 'bom_and_nul':
        return { topic: fleetTopic, payload: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(valid), Buffer.from([0])]), retain: false };
    }
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand.next() * xs.length)];
  }
}

/** One malformed HTTP request: what it sends, and the statuses that are a correct answer. */
interface HttpCase {
  name: string;
  run: (http: HttpStats) => Promise<number | null>;
}

/**
 * A hostile HTTP client of the hub: malformed and oversized bodies, wrong content types, bad query
 * values, unknown routes and tools, foreign Host headers, garbage request lines. Every answer is
 * counted by status; any 5xx is a failure of the soak.
 */
export class HttpFlooder {
  readonly answers = new Map<string, Map<string, number>>();
  private timer: NodeJS.Timeout | null = null;
  private running = 0;
  private readonly cases: HttpCase[];
  private next = 0;

  constructor(
    private readonly http: HttpStats,
    private readonly perSecond: number,
    realIds: string[],
    simIds: string[],
  ) {
    const real = realIds[0] ?? simIds[0] ?? 'none';
    const sim = simIds[0] ?? 'none';
    const json = { 'content-type': 'application/json' };
    const post = (name: string, path: string, body: string | Buffer, headers: Record<string, string> = json): HttpCase => ({
      name,
      run: async (h) => (await h.request('flood', 'POST', path, { body, headers }))?.status ?? null,
    });
    const get = (name: string, path: string, headers: Record<string, string> = {}): HttpCase => ({
      name,
      run: async (h) => (await h.request('flood', 'GET', path, { headers }))?.status ?? null,
    });
    const raw = (name: string, text: string): HttpCase => ({
      name,
      run: async (h) => h.note('flood', 'RAW', name, await rawRequest(h.url, text)),
    });
    const call = `/tools/call?target=${encodeURIComponent(real)}`;
    this.cases = [
      post('truncated_json', call, '{"tool": "get_firmware_status", "arguments": '),
      post('body_2MiB', call, Buffer.alloc(2 * 1024 * 1024, 0x20)),
      post('text_plain', call, 'get_firmware_status', { 'content-type': 'text/plain' }),
      get('bad_query_value', '/fleet/mqtt/latest?stale=maybe'),
      get('hex_limit', '/debug/events?limit=0x10'),
      get('unknown_route', '/no/such/route'),
      post('unknown_tool', call, JSON.stringify({ tool: 'no_such_tool', arguments: {} })),
      post('unknown_target', '/tools/call?target=made-up-device', JSON.stringify({ tool: 'get_firmware_status', arguments: {} })),
      post('deep_arguments', call, `{"tool":"get_firmware_status","arguments":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`),
      post('long_tool_name', call, JSON.stringify({ tool: 'x'.repeat(300), arguments: {} })),
      post('arguments_not_object', call, JSON.stringify({ tool: 'get_firmware_status', arguments: 5 })),
      post('no_tool_server', `/tools/call?target=${encodeURIComponent(sim)}`, JSON.stringify({ tool: 'get_firmware_status', arguments: {} })),
      raw('foreign_host', 'GET /fleet/mqtt/latest?device=none HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n'),
      get('cache_buster', `/fleet/mqtt/latest?device=${encodeURIComponent(sim)}&_=${Date.now()}`),
      raw('garbage_request_line', 'GARBAGE / HTTP/9.9\r\n\r\n'),
      raw('huge_header', `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(80_000)}\r\n\r\n`),
    ];
  }

  start(): void {
    if (this.perSecond === 0) return;
    const everyMs = Math.max(5, Math.round(1000 / this.perSecond));
    this.timer = setInterval(() => {
      // Bounded: a slow hub makes the flood skip, not pile up.
      if (this.running >= 20 || !this.http.isOpen) return;
      const c = this.cases[this.next++ % this.cases.length];
      this.running++;
      void c
        .run(this.http)
        .then((status) => {
          let m = this.answers.get(c.name);
          if (!m) this.answers.set(c.name, (m = new Map()));
          const key = status === null ? 'none' : String(status);
          m.set(key, (m.get(key) ?? 0) + 1);
        })
        .finally(() => this.running--);
    }, everyMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** Sends raw bytes to the hub and answers the status of the reply's first line (null: none within 5 s). */
function rawRequest(baseUrl: string, text: string): Promise<number | null> {
  const u = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = netConnect({ host: u.hostname, port: Number(u.port) });
    let got = '';
    const done = (status: number | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(status);
    };
    const timer = setTimeout(() => done(null), 5_000);
    socket.on('connect', () => socket.write(text));
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(got);
      if (m) done(Number(m[1]));
    });
    socket.on('error', () => done(null));
    socket.on('close', () => done(null));
  });
}
