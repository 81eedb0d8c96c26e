import type { ClaimHolder, ClaimOutcome, HubSharedState } from '../services/hub-services.js';

/** Live claims one scope may hold; at A2A's 300 s window this is about 300 signed requests a second. */
const DEFAULT_MAX_CLAIMS = 100_000;

/** One scope's live claims (in time order: one ttl per scope in practice) and each holder's share of them. */
interface ScopeClaims {
  all: Map<string, { until: number; holder: string | undefined }>;
  byHolder: Map<string, Map<string, number>>;
}

/**
 * The shared state of one hub (no replicas): claims and records in this process. Records are
 * copied through JSON so that a stored value shares nothing with its writer, as Redis would.
 */
export class MemorySharedState implements HubSharedState {
  private readonly claims = new Map<string, ScopeClaims>();
  private readonly records = new Map<string, Map<string, string>>();

  constructor(private readonly options: { maxClaims?: number; now?: () => number } = {}) {}

  claimOnce(scope: string, key: string, ttlMs: number, holder?: ClaimHolder): Promise<ClaimOutcome> {
    const now = this.options.now?.() ?? Date.now();
    let live = this.claims.get(scope);
    if (!live) this.claims.set(scope, (live = { all: new Map(), byHolder: new Map() }));
    const existing = live.all.get(key);
    if (existing !== undefined && existing.until > now) return Promise.resolve('already_claimed');
    const max = this.options.maxClaims ?? DEFAULT_MAX_CLAIMS;
    if (live.all.size >= max) {
      // Expired claims are at the front.
      for (const [k, c] of live.all) {
        if (c.until > now) break;
        forget(live, k);
      }
      if (live.all.size >= max) return Promise.resolve('full');
    }
    if (holder) {
      const held = live.byHolder.get(holder.id);
      if (held && held.size >= holder.max) {
        for (const [k, until] of held) {
          if (until > now) break;
          forget(live, k);
        }
        if (held.size >= holder.max) return Promise.resolve('holder_full');
      }
    }
    forget(live, key);
    const until = now + ttlMs;
    live.all.set(key, { until, holder: holder?.id });
    if (holder) {
      let held = live.byHolder.get(holder.id);
      if (!held) live.byHolder.set(holder.id, (held = new Map<string, number>()));
      held.set(key, until);
    }
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

/** Drops a claim from its scope and from its holder's share (a holder with none left is dropped too). */
function forget(live: ScopeClaims, key: string): void {
  const claim = live.all.get(key);
  if (!claim) return;
  live.all.delete(key);
  if (claim.holder === undefined) return;
  const held = live.byHolder.get(claim.holder);
  held?.delete(key);
  if (held?.size === 0) live.byHolder.delete(claim.holder);
}
