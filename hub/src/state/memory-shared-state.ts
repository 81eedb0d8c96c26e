import type { ClaimOutcome, HubSharedState } from '../../../core/src/host/hub-services.js';

/** Live claims one scope may hold; at A2A's 300 s window this is about 300 signed requests a second. */
const DEFAULT_MAX_CLAIMS = 100_000;

/**
 * The shared state of one hub (no replicas): claims and records in this process. Records are
 * copied through JSON so that a stored value shares nothing with its writer, as Redis would.
 */
export class MemorySharedState implements HubSharedState {
  private readonly claims = new Map<string, Map<string, number>>();
  private readonly records = new Map<string, Map<string, string>>();

  constructor(private readonly options: { maxClaims?: number; now?: () => number } = {}) {}

  claimOnce(scope: string, key: string, ttlMs: number): Promise<ClaimOutcome> {
    const now = this.options.now?.() ?? Date.now();
    let live = this.claims.get(scope);
    if (!live) this.claims.set(scope, (live = new Map<string, number>()));
    const until = live.get(key);
    if (until !== undefined && until > now) return Promise.resolve('already_claimed');
    if (live.size >= (this.options.maxClaims ?? DEFAULT_MAX_CLAIMS)) {
      // Claims are inserted in time order with one ttl per scope in practice: expired ones are at the front.
      for (const [k, t] of live) {
        if (t > now) break;
        live.delete(k);
      }
      if (live.size >= (this.options.maxClaims ?? DEFAULT_MAX_CLAIMS)) return Promise.resolve('full');
    }
    live.delete(key);
    live.set(key, now + ttlMs);
    return Promise.resolve('claimed');
  }

  put(scope: string, key: string, value: unknown): Promise<void> {
    let map = this.records.get(scope);
    if (!map) this.records.set(scope, (map = new Map<string, string>()));
    map.set(key, JSON.stringify(value));
    return Promise.resolve();
  }

  get<T = unknown>(scope: string, key: string): Promise<T | undefined> {
    const raw = this.records.get(scope)?.get(key);
    return Promise.resolve(raw === undefined ? undefined : (JSON.parse(raw) as T));
  }

  entries<T = unknown>(scope: string): Promise<Map<string, T>> {
    const out = new Map<string, T>();
    for (const [k, raw] of this.records.get(scope) ?? []) out.set(k, JSON.parse(raw) as T);
    return Promise.resolve(out);
  }

  delete(scope: string, key: string): Promise<void> {
    this.records.get(scope)?.delete(key);
    return Promise.resolve();
  }

  /** One hub: there is no other replica to tell. */
  broadcast(): void {}

  onBroadcast(): () => void {
    return () => undefined;
  }
}
