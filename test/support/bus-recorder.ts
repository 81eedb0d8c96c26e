/**
 * Records what a bus subscription delivers, so a test can assert on the whole sequence and wait for
 * one message by predicate instead of sleeping. Used with a real broker (MqttBus) or the MemoryBus.
 */
import type { BusPort } from '../../core/src/bus/bus-port.js';

export interface Recorded {
  topic: string;
  /** The payload as text. */
  payload: string;
  /** The payload parsed as a JSON object; {} when it is not one (garbage a test published itself). */
  body: Record<string, unknown>;
  retain: boolean;
  /** 1, 2, ... in arrival order: `until(..., { after: recorder.mark })` skips what came before. */
  seq: number;
  /** Date.now() on arrival. */
  at: number;
}

function jsonObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export class BusRecorder {
  readonly messages: Recorded[] = [];
  private seq = 0;
  private waiters: { pred: (m: Recorded) => boolean; resolve: (m: Recorded) => void }[] = [];

  /** @param timeoutMs how long `until` waits unless told otherwise. */
  constructor(private readonly timeoutMs = 5_000) {}

  /** Pass this to `bus.subscribe`. */
  readonly handler = (topic: string, payload: Buffer, meta: { retain: boolean }): void => {
    const text = payload.toString();
    const m: Recorded = { topic, payload: text, body: jsonObject(text), retain: meta.retain, seq: ++this.seq, at: Date.now() };
    this.messages.push(m);
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred(m)) return true;
      w.resolve(m);
      return false;
    });
  };

  /** The seq of the last message so far. */
  get mark(): number {
    return this.seq;
  }

  topics(): string[] {
    return this.messages.map((m) => m.topic);
  }

  /** The first message (after seq `after`, if given) that matches, waiting for it if none has yet. */
  until(pred: (m: Recorded) => boolean, what: string, options: { after?: number; timeoutMs?: number } = {}): Promise<Recorded> {
    const after = options.after ?? 0;
    const match = (m: Recorded): boolean => m.seq > after && pred(m);
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        const last = this.messages.slice(-8).map((m) => `${m.topic} ${m.payload.slice(0, 120)}`);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last messages:\n${last.join('\n')}`));
      }, timeoutMs);
      const done = (m: Recorded): void => {
        clearTimeout(timer);
        resolve(m);
      };
      this.waiters.push({ pred: match, resolve: done });
    });
  }
}

/** Everything published on `filter` during the next `ms` milliseconds. */
export async function recordFor(bus: BusPort, filter: string, ms: number): Promise<Recorded[]> {
  const recorder = new BusRecorder();
  const off = await bus.subscribe(filter, recorder.handler);
  await new Promise((resolve) => setTimeout(resolve, ms));
  await off();
  return recorder.messages;
}
