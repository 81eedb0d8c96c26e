import type { HubStateStore, StateKeeper, StateLoad } from '../services/hub-services.js';
import type { Logger } from 'lookout/core';
import { DEFAULT_STATE_MAX_BYTES } from './file-state-store.js';
import type { RedisConnection } from './redis-connection.js';
import { DEFAULT_SAVE_INTERVAL_MS, StateKeepers } from './state-keepers.js';
import { envelopeJson } from './state-json.js';

const FORMAT = 'lookout-hub-state/1';
const KEY = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * HubStateStore in Redis: one string per key (`<prefix>state:<key>`) holding the same envelope as
 * the file store, so replicas start from what any of them saved. A value that cannot be used is
 * renamed aside (`…:corrupt-<time>`, kept a week) and the hub starts without it. While Redis is
 * down a write fails, is logged and retried at the next change (StateKeepers); a load answers empty.
 */
export class RedisStateStore implements HubStateStore {
  private readonly keepers: StateKeepers;
  private readonly cursors = new Map<string, TrackedPoint>();
  readonly maxBytes: number;

  constructor(
    private readonly redis: RedisConnection,
    private readonly options: { logger: Logger; maxBytes?: number; intervalMs?: number },
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_STATE_MAX_BYTES;
    this.keepers = new StateKeepers((key, value) => this.save(key, value), options.intervalMs ?? DEFAULT_SAVE_INTERVAL_MS, options.logger);
  }

  private keyOf(key: string): string {
    if (!KEY.test(key)) throw new Error(`hub state key "${key}" is not a lower-case name`);
    return this.redis.key('state', key);
  }

  async load<T>(key: string, parse: (raw: unknown) => T): Promise<StateLoad<T>> {
    const redisKey = this.keyOf(key);
    const tracked = this.cursors.get(key);
    let text: string | null;
    let point: Partial<StreamPoint> = {};
    try {
      const size = await this.redis.client.strlen(redisKey);
      if (size > this.maxBytes) return await this.setAside(key, `${size} bytes, over the bound of ${this.maxBytes}`);
      if (tracked) {
        // Value and point in one transaction: another replica saving between two reads would pair
        // its newer cache with this older point, and the stream between them would be applied twice.
        const read = await this.redis.client.multi().get(redisKey).get(this.redis.key('state-cursor', key)).get(this.redis.key('state-applied', key)).exec();
        const failed = read?.find(([err]) => err);
        if (!read || failed) throw failed?.[0] ?? new Error('transaction aborted');
        const [value, cursor, applied] = read.map(([, v]) => v as string | null);
        text = value;
        point = { ...(cursor ? { cursor } : {}), ...(applied ? { applied } : {}) };
      } else text = await this.redis.client.get(redisKey);
    } catch (err) {
      const warning = `hub state "${key}" not restored: redis unreachable (${(err as Error).message}); starting without it`;
      this.options.logger.warn({ key }, warning);
      return { warning };
    }
    if (text === null) return {};
    let loaded: StateLoad<T>;
    try {
      const envelope = JSON.parse(text) as { format?: unknown; key?: unknown; saved_at?: unknown; value?: unknown };
      if (envelope?.format !== FORMAT || envelope.key !== key) throw new Error(`not a ${FORMAT} value of "${key}"`);
      const savedAt = typeof envelope.saved_at === 'string' ? Date.parse(envelope.saved_at) : NaN;
      loaded = { value: parse(envelope.value), ...(Number.isFinite(savedAt) ? { savedAt } : {}) };
    } catch (err) {
      return this.setAside(key, (err as Error).message);
    }
    // Only with the value it was saved with: a cache set aside starts empty, from the stream's start.
    tracked?.resume(point);
    return loaded;
  }

  keep(key: string, snapshot: () => unknown): StateKeeper {
    this.keyOf(key);
    const cursor = this.cursors.get(key);
    if (!cursor) return this.keepers.keep(key, snapshot);
    // The point is read in the turn the snapshot takes the state: the saved value is exactly what was
    // applied up to that stream id. The point first: reading it applies what a replica held back (mirrored devices).
    return this.keepers.keep(key, async () => {
      const at = cursor.point();
      const value = snapshot();
      return new WithCursor(await value, at);
    });
  }

  /**
   * Saves `point()` beside `key` at each save: where the ingest stream stood for the saved cache
   * (IngestRelay.resumePoint). The stream id has a key of its own, as replicas of earlier versions
   * read it; what was applied by then has another. When `key` is loaded, the point saved with it
   * goes to `resume` (IngestRelay.resumeFrom), before `load` returns. Before the key's keeper exists.
   */
  trackCursor(key: string, point: () => StreamPoint, resume: (saved: Partial<StreamPoint>) => void): void {
    this.cursors.set(key, { point, resume });
  }

  close(): Promise<void> {
    return this.keepers.close();
  }

  private async save(key: string, saved: unknown): Promise<void> {
    const value = saved instanceof WithCursor ? saved.value : saved;
    const text = envelopeJson(FORMAT, key, value);
    const bytes = Buffer.byteLength(text);
    if (bytes > this.maxBytes) throw new Error(`hub state "${key}" is ${bytes} bytes, over the bound of ${this.maxBytes}: not saved`);
    const tx = this.redis.client.multi().set(this.keyOf(key), text);
    if (saved instanceof WithCursor) {
      tx.set(this.redis.key('state-cursor', key), saved.point.cursor);
      tx.set(this.redis.key('state-applied', key), saved.point.applied);
    }
    const results = await tx.exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw new Error(`hub state "${key}" not saved: ${failed?.[0]?.message ?? 'transaction aborted'}`);
  }

  private async setAside(key: string, why: string): Promise<StateLoad<never>> {
    const aside = `${this.keyOf(key)}:corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    let where = `set aside as ${aside}`;
    try {
      await this.redis.client.rename(this.keyOf(key), aside);
      await this.redis.client.pexpire(aside, 7 * 86_400_000);
    } catch (err) {
      where = `could not be set aside (${(err as Error).message})`;
    }
    const warning = `hub state "${key}" not restored: ${why}; ${where}; starting without it`;
    this.options.logger.warn({ key, aside }, warning);
    return { warning };
  }
}

/** A stream id and what was applied up to it (JSON), saved beside a value. */
export interface StreamPoint {
  cursor: string;
  applied: string;
}

interface TrackedPoint {
  point: () => StreamPoint;
  resume: (saved: Partial<StreamPoint>) => void;
}

class WithCursor {
  constructor(
    readonly value: unknown,
    readonly point: StreamPoint,
  ) {}
}
