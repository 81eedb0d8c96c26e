import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ClaimHolder, ClaimOutcome, HubSharedState } from '../services/hub-services.js';
import { LookoutError } from 'lookout/core';
import type { RedisConnection } from './redis-connection.js';

/** One record's bound: scopes hold small records (a grade, a presence), never a cache. */
export const SHARED_RECORD_MAX_BYTES = 64 * 1024;

/**
 * A claim counted against its holder, in one script so that no replica claims between the count and
 * the claim. KEYS: the claim, the holder's sorted set (member: claim key, score: its expiry in
 * Redis's own clock, which every replica shares). ARGV: ttl ms, the holder's bound, the member.
 * The set's expired members are dropped first, and the set expires with its newest claim. TIME before
 * a write needs effects replication: the default from Redis 5, asked for by replicate_commands before.
 */
const HELD_CLAIM_LUA = `
redis.replicate_commands()
if redis.call('EXISTS', KEYS[1]) == 1 then return 'already_claimed' end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 'holder_full' end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 'claimed'
`;
type HeldClaim = (claimKey: string, holderKey: string, ttlMs: number, max: number, member: string) => Promise<string>;

/**
 * HubSharedState in Redis, the meaning of MemorySharedState across replicas: `claimOnce` is
 * `SET key 1 NX PX ttl` (the first replica wins, the claim expires by itself), and with a holder a
 * Lua script that also counts the claim in the holder's sorted set; a scope is a hash.
 * While Redis is down a claim fails closed (`unavailable`: a refused request is retried, a replay
 * let through is not undone), a write is refused with `service_unavailable`, and reads answer from the records
 * this replica read or wrote last (a local copy; stale until Redis returns).
 */
export class RedisSharedState implements HubSharedState {
  private readonly copies = new Map<string, Map<string, string>>();
  private readonly listeners = new Map<string, Set<(value: unknown) => void>>();
  private subscriber: Redis | undefined;
  /** This process: its own broadcasts come back from Redis and are skipped. */
  private readonly origin = randomBytes(8).toString('hex');

  private readonly heldClaim: HeldClaim;

  constructor(private readonly redis: RedisConnection) {
    // ioredis sends it by its SHA and loads it again after NOSCRIPT (a Redis restart).
    redis.client.defineCommand('lookoutHeldClaim', { numberOfKeys: 2, lua: HELD_CLAIM_LUA });
    const client = redis.client as unknown as { lookoutHeldClaim: HeldClaim };
    this.heldClaim = (...args) => client.lookoutHeldClaim(...args);
  }

  async claimOnce(scope: string, key: string, ttlMs: number, holder?: ClaimHolder): Promise<ClaimOutcome> {
    if (!this.redis.up) return 'unavailable';
    const ttl = Math.max(1, Math.round(ttlMs));
    const claimKey = this.redis.key('claim', scope, key);
    try {
      if (holder) {
        const outcome = await this.heldClaim(claimKey, this.redis.key('claim-holder', scope, holder.id), ttl, holder.max, key);
        return outcome === 'claimed' || outcome === 'already_claimed' || outcome === 'holder_full' ? outcome : 'unavailable';
      }
      const done = await this.redis.client.set(claimKey, '1', 'PX', ttl, 'NX');
      return done === 'OK' ? 'claimed' : 'already_claimed';
    } catch {
      // Whether the SET reached Redis is unknown: if it did, the key is claimed, and a retry is a new nonce anyway.
      return 'unavailable';
    }
  }

  async put(scope: string, key: string, value: unknown): Promise<void> {
    const json = JSON.stringify(value);
    if (Buffer.byteLength(json) > SHARED_RECORD_MAX_BYTES) {
      throw new LookoutError('argument_invalid', `shared record ${scope}/${key} is over ${SHARED_RECORD_MAX_BYTES} bytes`);
    }
    this.copyOf(scope).set(key, json);
    try {
      await this.redis.client.hset(this.redis.key('shared', scope), key, json);
    } catch (err) {
      throw new LookoutError('service_unavailable', `shared state unreachable (redis): ${(err as Error).message}`);
    }
  }

  async get<T = unknown>(scope: string, key: string): Promise<T | undefined> {
    let raw: string | null | undefined;
    try {
      if (!this.redis.up) throw new Error('down');
      const fresh = await this.redis.client.hget(this.redis.key('shared', scope), key);
      if (fresh === null) this.copyOf(scope).delete(key);
      else this.copyOf(scope).set(key, fresh);
      raw = fresh;
    } catch {
      raw = this.copyOf(scope).get(key);
    }
    return raw === null || raw === undefined ? undefined : (JSON.parse(raw) as T);
  }

  async entries<T = unknown>(scope: string): Promise<Map<string, T>> {
    let all: Record<string, string> | Map<string, string>;
    try {
      if (!this.redis.up) throw new Error('down');
      const fresh = await this.redis.client.hgetall(this.redis.key('shared', scope));
      this.copies.set(scope, new Map(Object.entries(fresh)));
      all = fresh;
    } catch {
      all = this.copyOf(scope);
    }
    const out = new Map<string, T>();
    for (const [k, raw] of all instanceof Map ? all : Object.entries(all)) out.set(k, JSON.parse(raw) as T);
    return out;
  }

  async delete(scope: string, key: string): Promise<void> {
    this.copyOf(scope).delete(key);
    try {
      await this.redis.client.hdel(this.redis.key('shared', scope), key);
    } catch (err) {
      throw new LookoutError('service_unavailable', `shared state unreachable (redis): ${(err as Error).message}`);
    }
  }

  broadcast(channel: string, value: unknown): void {
    const json = JSON.stringify({ o: this.origin, v: value });
    if (Buffer.byteLength(json) > SHARED_RECORD_MAX_BYTES || !this.redis.up) return;
    this.redis.client.publish(this.redis.key('broadcast', channel), json).catch(() => undefined);
  }

  onBroadcast(channel: string, listener: (value: unknown) => void): () => void {
    const key = this.redis.key('broadcast', channel);
    let set = this.listeners.get(key);
    if (!set) {
      this.listeners.set(key, (set = new Set()));
      // Subscribed on a connection of its own (a subscribed connection takes no other command); ioredis subscribes again after a reconnect.
      this.subscriber ??= this.openSubscriber();
      if (this.subscriber.status === 'ready') void this.subscriber.subscribe(key).catch(() => undefined);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Closes the broadcast connection (the hub's stop). */
  close(): void {
    this.subscriber?.disconnect();
  }

  private openSubscriber(): Redis {
    const sub = this.redis.duplicate();
    sub.on('error', () => undefined); // the main connection logs the outage
    // Commands are refused while it connects (no offline queue): each (re)connection subscribes to every channel listened to.
    sub.on('ready', () => {
      if (this.listeners.size > 0) void sub.subscribe(...this.listeners.keys()).catch(() => undefined);
    });
    sub.on('message', (key: string, text: string) => {
      let parsed: { o?: unknown; v?: unknown };
      try {
        parsed = JSON.parse(text) as { o?: unknown; v?: unknown };
      } catch {
        return;
      }
      if (parsed.o === this.origin) return;
      for (const l of this.listeners.get(key) ?? []) {
        try {
          l(parsed.v);
        } catch {
          // A listener's failure is its own; the others still hear.
        }
      }
    });
    return sub;
  }

  private copyOf(scope: string): Map<string, string> {
    let m = this.copies.get(scope);
    if (!m) this.copies.set(scope, (m = new Map<string, string>()));
    return m;
  }
}
