import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { WIRE_LIMITS } from 'lookout/core/contracts';

/** Per-topic figures of a tap: messages, their rate, bytes. */
export interface TopicFigures {
  messages: number;
  bytes: number;
  /** Messages per second over the last window. */
  rate_hz: number;
}

/** What a device's messages say that an operator watches: people in view, the die, the thermal state. */
export interface DeviceFigures {
  persons: number | null;
  persons_max: number;
  die_temp_c: number | null;
  thermal_state: string | null;
  layer: string | null;
  runtime: string | null;
  /** Plugins the last hello reports failed, with their code. */
  failed_plugins: string[];
  /** Thermal states seen during the tap. */
  thermal_states_seen: string[];
  die_temp_max_c: number | null;
}

export interface TapSummary {
  started_at: string;
  seconds: number;
  messages: number;
  out: string | null;
  topics: Record<string, TopicFigures>;
  devices: Record<string, DeviceFigures>;
}

const RATE_WINDOW_MS = 5000;

/**
 * The bus of a session as JSONL (one line per message: time, topic, retained flag, the payload as
 * JSON or base64 when it is not JSON) and its running figures: rates per topic, person counts
 * (class 0 at the spec's confidence gate), die temperature and thermal state.
 */
export class TapRecorder {
  private readonly out: WriteStream | undefined;
  private readonly startedAt = Date.now();
  private readonly topics = new Map<string, { messages: number; bytes: number; recent: number[] }>();
  private readonly devices = new Map<string, DeviceFigures>();
  private total = 0;

  private constructor(
    readonly path: string | null,
    out: WriteStream | undefined,
  ) {
    this.out = out;
  }

  /** Figures only, no file (soak-matrix, soak without --tap). */
  static inMemory(): TapRecorder {
    return new TapRecorder(null, undefined);
  }

  static async open(path: string): Promise<TapRecorder> {
    await mkdir(dirname(path), { recursive: true });
    const out = createWriteStream(path, { flags: 'a' });
    await new Promise<void>((resolve, reject) => out.once('open', () => resolve()).once('error', reject));
    return new TapRecorder(path, out);
  }

  record(topic: string, payload: Buffer, retain: boolean): void {
    const now = Date.now();
    let parsed: unknown;
    let isJson = true;
    try {
      parsed = JSON.parse(payload.toString('utf8'));
    } catch {
      isJson = false;
    }
    this.out?.write(
      `${JSON.stringify({ t: new Date(now).toISOString(), topic, retain, ...(isJson ? { payload: parsed } : { payload_base64: payload.toString('base64') }) })}\n`,
    );
    this.total++;
    const key = topicKey(topic);
    const t = this.topics.get(key) ?? { messages: 0, bytes: 0, recent: [] };
    t.messages++;
    t.bytes += payload.length;
    // Retained messages are the broker's memory, not traffic of this session.
    if (!retain) t.recent.push(now);
    this.topics.set(key, t);
    const [, device, ...rest] = topic.split('/');
    if (isJson && device && topic.startsWith('devices/')) this.observe(device, rest.join('/'), parsed);
  }

  private observe(device: string, suffix: string, message: unknown): void {
    const d = this.devices.get(device) ?? {
      persons: null,
      persons_max: 0,
      die_temp_c: null,
      thermal_state: null,
      layer: null,
      runtime: null,
      failed_plugins: [],
      thermal_states_seen: [],
      die_temp_max_c: null,
    };
    const m = (message ?? {}) as Record<string, unknown>;
    if (suffix === 'dets' && Array.isArray(m.dets)) {
      const persons = (m.dets as { c?: unknown; p?: unknown }[]).filter(
        (x) => x.c === 0 && typeof x.p === 'number' && x.p >= WIRE_LIMITS.personConfidenceGate,
      ).length;
      d.persons = persons;
      d.persons_max = Math.max(d.persons_max, persons);
    }
    if (typeof m.die_temp_c === 'number') d.die_temp_c = m.die_temp_c;
    else if (typeof m.die_temp === 'number') d.die_temp_c = m.die_temp;
    if (d.die_temp_c !== null) d.die_temp_max_c = Math.max(d.die_temp_max_c ?? -Infinity, d.die_temp_c);
    if (typeof m.thermal_state === 'string') {
      d.thermal_state = m.thermal_state;
      if (!d.thermal_states_seen.includes(m.thermal_state)) d.thermal_states_seen.push(m.thermal_state);
    }
    if (suffix === 'hello') {
      if (typeof m.layer === 'string') d.layer = m.layer;
      const runtime = (m.versions as { runtime?: unknown } | undefined)?.runtime;
      if (typeof runtime === 'string') d.runtime = runtime;
      if (Array.isArray(m.plugins)) {
        d.failed_plugins = (m.plugins as { name?: unknown; state?: unknown; code?: unknown }[])
          .filter((p) => p.state === 'failed')
          .map((p) => `${String(p.name)}${typeof p.code === 'string' ? ` (${p.code})` : ''}`);
      }
    }
    this.devices.set(device, d);
  }

  summary(): TapSummary {
    const now = Date.now();
    const topics: Record<string, TopicFigures> = {};
    for (const [key, t] of [...this.topics.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      t.recent = t.recent.filter((at) => now - at <= RATE_WINDOW_MS);
      const window = Math.min(RATE_WINDOW_MS, now - this.startedAt) / 1000;
      topics[key] = { messages: t.messages, bytes: t.bytes, rate_hz: window > 0 ? Number((t.recent.length / window).toFixed(2)) : 0 };
    }
    return {
      started_at: new Date(this.startedAt).toISOString(),
      seconds: Number(((now - this.startedAt) / 1000).toFixed(1)),
      messages: this.total,
      out: this.path,
      topics,
      devices: Object.fromEntries(this.devices),
    };
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.out ? this.out.end(() => resolve()) : resolve()));
  }
}

/** `devices/cam-1/dets` → `cam-1 dets`: one row per device and suffix. */
function topicKey(topic: string): string {
  const [root, device, ...rest] = topic.split('/');
  return (root === 'devices' || root === 'shadow') && device ? `${device} ${root === 'shadow' ? 'shadow/' : ''}${rest.join('/')}` : topic;
}

/** The live view: a table redrawn in place on a terminal. */
export function formatTapView(s: TapSummary): string {
  const lines = [`tap ${s.seconds.toFixed(0)} s, ${s.messages} messages${s.out ? ` → ${s.out}` : ''}`, ''];
  lines.push(`${'device / topic'.padEnd(36)}${'msgs'.padStart(8)}${'Hz'.padStart(8)}${'KB'.padStart(10)}`);
  for (const [key, t] of Object.entries(s.topics))
    lines.push(`${key.padEnd(36)}${String(t.messages).padStart(8)}${t.rate_hz.toFixed(1).padStart(8)}${(t.bytes / 1024).toFixed(1).padStart(10)}`);
  lines.push('');
  for (const [device, d] of Object.entries(s.devices)) {
    lines.push(
      `${device}: persons ${d.persons ?? '—'} (max ${d.persons_max}), die ${d.die_temp_c === null ? '—' : `${d.die_temp_c.toFixed(1)} C`}, ${d.thermal_state ?? '—'}${d.layer ? `, ${d.layer}` : ''}${d.runtime ? `, runtime ${d.runtime}` : ''}`,
    );
  }
  return lines.join('\n');
}
