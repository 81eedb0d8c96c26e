import type { HubStateStore, StateKeeper, StateLoad } from '../services/hub-services.js';
import type { Logger } from 'lookout/core';
import { streamIdBefore, type ResumePoint } from './stream-point.js';
import { DEFAULT_STATE_MAX_BYTES } from './file-state-store.js';
import type { RedisConnection } from './redis-connection.js';
import { DEFAULT_SAVE_INTERVAL_MS, StateKeepers } from './state-keepers.js';
import { envelopeJson } from './state-json.js';

const FORMAT = 'lookout-hub-state/1';
const KEY = /^[a-z][a-z0-9-]{0,63}$/;
/** KEYS: the points, a replica's save; ARGV: the replica, its point as read. */
const FORGET_UNLESS_SAVED_AGAIN = `if (redis.call('HGET', KEYS[1], ARGV[1]) or '') == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
end
return 0`;

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
    if (tracked) {
      try {
        const points = await this.redis.client.hgetall(this.pointsKey(key));
        if (Object.keys(points).length > 0) return await this.loadReplicaSave(key, tracked, points, parse);
      } catch (err) {
        return this.unreachable(key, err as Error);
      }
    }
    let text: string | null;
    let point: Partial<ResumePoint> = {};
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
      return this.unreachable(key, err as Error);
    }
    if (text === null) return {};
    let loaded: StateLoad<T>;
    try {
      loaded = this.parse(key, text, parse);
    } catch (err) {
      return this.setAside(key, (err as Error).message);
    }
    // Only with the value it was saved with: a cache set aside starts empty, from the stream's start.
    tracked?.resume(point);
    return loaded;
  }

  /**
   * A tracked key saved by each replica under its own name: this replica's save when a replay from
   * it misses nothing (TrackedPoint.replayable: what happened while it was down is then applied here
   * too, its local history included), else the newest any replica saved (a newcomer's, or one down
   * for longer: what was trimmed is missed, as the log says). A save that cannot be replayed from is
   * of no use but as the newest: the other replicas' are removed.
   */
  private async loadReplicaSave<T>(key: string, tracked: TrackedPoint, points: Record<string, string>, parse: (raw: unknown) => T): Promise<StateLoad<T>> {
    const ok = new Map(await Promise.all(Object.entries(points).map(async ([member, at]) => [member, await tracked.replayable(at)] as const)));
    const replayable = (member: string) => ok.get(member) === true;
    const newestFirst = Object.keys(points).sort((a, b) => (streamIdBefore(points[a], points[b]) ? 1 : -1));
    const order = replayable(tracked.member) ? [tracked.member, ...newestFirst.filter((m) => m !== tracked.member)] : newestFirst;
    let refused: string | undefined;
    for (const member of order) {
      const hash = this.replicaKey(key, member);
      const size = await this.redis.client.hstrlen(hash, 'value');
      if (size > this.maxBytes) {
        this.options.logger.warn({ key, member }, `hub state "${key}" of ${member}: ${size} bytes, over the bound of ${this.maxBytes}; not used`);
        continue;
      }
      const fields: Partial<Record<string, string>> = await this.redis.client.hgetall(hash);
      if (!fields.value || !fields.cursor || !fields.applied) {
        await this.forget(key, member, points[member]);
        continue;
      }
      let loaded: StateLoad<T>;
      try {
        loaded = this.parse(key, fields.value, parse);
      } catch (err) {
        refused = (await this.setAside(key, (err as Error).message, hash)).warning;
        await this.forget(key, member, points[member]);
        continue;
      }
      for (const other of order) if (other !== member && other !== tracked.member && !replayable(other)) await this.forget(key, other, points[other]);
      tracked.resume({ cursor: fields.cursor, applied: fields.applied, ...(fields.members !== undefined ? { members: fields.members } : {}) });
      if (member !== tracked.member) {
        const why = points[tracked.member] ? 'its own is older than what the stream still holds' : 'none of its own';
        this.options.logger.info(
          { key, member },
          `hub state "${key}": resumed from the newest save, ${member}'s (${why}): what the stream held before it is not applied here`,
        );
      }
      return loaded;
    }
    return refused ? { warning: refused } : {};
  }

  /** Removes a replica's save of `key`, unless it saved again since its point was read as `at`. */
  private async forget(key: string, member: string, at: string | undefined): Promise<void> {
    await this.redis.client.eval(FORGET_UNLESS_SAVED_AGAIN, 2, this.pointsKey(key), this.replicaKey(key, member), member, at ?? '');
  }

  private parse<T>(key: string, text: string, parse: (raw: unknown) => T): StateLoad<T> {
    const envelope = JSON.parse(text) as { format?: unknown; key?: unknown; saved_at?: unknown; value?: unknown };
    if (envelope?.format !== FORMAT || envelope.key !== key) throw new Error(`not a ${FORMAT} value of "${key}"`);
    const savedAt = typeof envelope.saved_at === 'string' ? Date.parse(envelope.saved_at) : NaN;
    return { value: parse(envelope.value), ...(Number.isFinite(savedAt) ? { savedAt } : {}) };
  }

  private unreachable(key: string, err: Error): StateLoad<never> {
    const warning = `hub state "${key}" not restored: redis unreachable (${err.message}); starting without it`;
    this.options.logger.warn({ key }, warning);
    return { warning };
  }

  /** A tracked key as one replica saved it: a hash of the value and the stream point. */
  private replicaKey(key: string, member: string): string {
    return this.redis.key('state-replica', `${key}:${member}`);
  }

  /** Each replica's saved stream id of a tracked key (a hash, member to id): which save is newest, without reading them. */
  private pointsKey(key: string): string {
    return this.redis.key('state-points', key);
  }

  keep(key: string, snapshot: () => unknown): StateKeeper {
    this.keyOf(key);
    const cursor = this.cursors.get(key);
    if (!cursor) return this.keepers.keep(key, snapshot);
    // The point is read in the turn the snapshot takes the state: the saved value is exactly what was
    // applied up to that stream id. The point first: reading it applies what a replica held back (mirrored devices).
    const keeper = this.keepers.keep(key, async () => {
      const at = cursor.point();
      const value = snapshot();
      return new WithCursor(await value, at);
    });
    // Entries that change no value (records, membership) still move the point: saved too, else a
    // restart would read them again (a record of rows merged twice).
    cursor.onMoved(() => keeper.changed());
    return keeper;
  }

  /**
   * Saves `key` with `point()` at each save, each replica under its own name (`member`): where the
   * ingest stream stood for the saved cache (IngestRelay.resumePoint). When `key` is loaded, the
   * point saved with the value chosen (loadReplicaSave) goes to `resume` (IngestRelay.resumeFrom),
   * before `load` returns. Before the key's keeper exists.
   */
  trackCursor(key: string, tracked: TrackedPoint): void {
    this.cursors.set(key, tracked);
  }

  close(): Promise<void> {
    return this.keepers.close();
  }

  private async save(key: string, saved: unknown): Promise<void> {
    const value = saved instanceof WithCursor ? saved.value : saved;
    const text = envelopeJson(FORMAT, key, value);
    const bytes = Buffer.byteLength(text);
    if (bytes > this.maxBytes) throw new Error(`hub state "${key}" is ${bytes} bytes, over the bound of ${this.maxBytes}: not saved`);
    const tx = this.redis.client.multi();
    const tracked = this.cursors.get(key);
    if (saved instanceof WithCursor && tracked) {
      // Whole: a field an earlier save had (members) and this one has not goes.
      tx.del(this.replicaKey(key, tracked.member)).hset(this.replicaKey(key, tracked.member), { value: text, ...saved.point });
      tx.hset(this.pointsKey(key), tracked.member, saved.point.cursor);
    } else tx.set(this.keyOf(key), text);
    const results = await tx.exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw new Error(`hub state "${key}" not saved: ${failed?.[0]?.message ?? 'transaction aborted'}`);
  }

  private async setAside(key: string, why: string, redisKey = this.keyOf(key)): Promise<StateLoad<never>> {
    const aside = `${redisKey}:corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    let where = `set aside as ${aside}`;
    try {
      await this.redis.client.rename(redisKey, aside);
      await this.redis.client.pexpire(aside, 7 * 86_400_000);
    } catch (err) {
      where = `could not be set aside (${(err as Error).message})`;
    }
    const warning = `hub state "${key}" not restored: ${why}; ${where}; starting without it`;
    this.options.logger.warn({ key, aside }, warning);
    return { warning };
  }
}

export interface TrackedPoint {
  /** This replica's stable name: its saves go under it, and a restart resumes from its own. */
  member: string;
  point(): ResumePoint;
  resume(saved: Partial<ResumePoint>): void;
  /** True when a replay from this saved stream id misses nothing (IngestRelay.replayable). */
  replayable(cursor: string): Promise<boolean>;
  /** Calls `changed` whenever the point moved (IngestRelay.onPointMoved). */
  onMoved(changed: () => void): void;
}

class WithCursor {
  constructor(
    readonly value: unknown,
    readonly point: ResumePoint,
  ) {}
}
