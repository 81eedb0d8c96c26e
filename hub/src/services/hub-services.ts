import type { BusPort } from 'lookout/core/host';
import type { DeviceGaugeSample } from 'lookout/lib/metrics';
import { type RouteEntry, type ErrorTableEntry, type PluginReport, serviceToken, type ServiceToken } from 'lookout/core';

/**
 * Services the hub host (`lookout-hub`) provides to hub plugins, which name them in `requires`.
 * The host implements them; core only holds their contracts, so a hub plugin needs nothing else.
 */

/** Facts about the running hub that its plugins show (no secrets: the broker URL has no credentials). */
export interface HubInfo {
  id: string;
  version: string;
  startedAt: number;
  /** Broker URL without credentials, e.g. `mqtt://127.0.0.1:1883`. */
  brokerUrl: string;
  embeddedBroker: boolean;
  tokenRequired: boolean;
  /** Set once the HTTP server listens. */
  httpUrl?: string;
  /** The certificate file the hub serves HTTPS with (readiness warns before it expires); absent on plain HTTP. */
  tlsCertPath?: string;
  bus: Pick<BusPort, 'connected'>;
  /** Where the state replicas share lives, and whether this replica's copy of it is current. */
  sharedState?(): SharedStateStatus;
  /**
   * A replica that divides the apply (`--mirror-interval-ms`) holds back the frequent messages of
   * devices another replica owns: this applies them now, for one device or all. The bus cache calls
   * it before it reads a device, so that every replica shows a device's newest messages.
   */
  freshen?(deviceId?: string): void;
  /** Such a replica applies every message of the device (of all when none is named) until the returned function is called. */
  follow?(deviceId?: string): () => void;
  /** Set on such a replica only: what a plugin derives from every message of a device is derived by its owner and shared. */
  dividedApply?: DividedApply;
  /**
   * The address the bus client `clientId` (a device connects with its id) is connected from, as
   * the embedded broker saw it; undefined when it is not connected, or the broker is external (the
   * hub cannot know who connects to another broker).
   */
  busClientAddress?(clientId: string): string | undefined;
  /** The hub's plugins with their live state (set once they are loaded). */
  plugins?(): PluginReport[];
  /** The hub's recent log lines (a bounded ring), when its logger keeps them. */
  logs?: HubLogLines;
}

/**
 * A replica that divides the apply applies every message only of the devices it owns; of the others
 * it applies the newest dets and telemetry now and then, marked `foreign` (the bus cache's
 * IngestedMessage). A plugin that derives something from each of those messages (the fleet
 * history's minute rows) derives it from the messages not so marked, and shares it with the others
 * (`publish`), which take it (`onRecord`) instead. Records go through the replicas' ingest stream,
 * in its order; a replica restarted from its saved cache reads the others' again from its point, as
 * the messages, and never its own (what it shared, it kept). Records written while Redis is down wait for it.
 */
export interface DividedApply {
  /** To every other replica's `onRecord(channel)` listeners (JSON, small: a flush's rows). */
  publish(channel: string, value: unknown): void;
  onRecord(channel: string, listener: (value: unknown) => void): () => void;
}

/** The hub's own recent log lines, newest kept (see LogRing in core's log folder). */
export interface HubLogLines {
  readonly maxLines: number;
  readonly maxBytes: number;
  tail(filter: { lines: number; maxBytes: number; minLevel?: number; component?: string }): {
    lines: { seq: number; time: number; level: number; component: string | null; line: string }[];
    matched: number;
    held: number;
    dropped: number;
  };
}

/**
 * `memory`: one hub, nothing shared (the default). `redis`: the state is in Redis (`--state`);
 * `replica` when the device ingest is shared with other hubs through the broker's shared
 * subscriptions. `stale` while this hub cannot read what the others wrote (Redis down): it answers
 * from its local copies until it has caught up.
 */
export interface SharedStateStatus {
  backend: 'memory' | 'redis';
  replica: boolean;
  stale: boolean;
  stale_since: string | null;
  /** Backend facts for operators (no credentials): group, pending writes, stream cursor. */
  details?: Record<string, unknown>;
}

/** The hub's Prometheus metrics as plugins feed and read them. */
export interface HubMetricsPort {
  /** Per bus message that reached ingest (`now` is the caller's clock reading). */
  ingested(topic: string, now?: number): void;
  invalid(topic: string, reason: string): void;
  toolCall(tool: string, outcome: string, seconds: number): void;
  /** Takes the `tool` label only from these names (the tools devices declare); any other is `other`. */
  setKnownTools(known: Iterable<string> | ((tool: string) => boolean)): void;
  /** Messages per second over the last seconds. */
  ingestRate(): number;
  /** The exposition for `GET /metrics`. */
  text(): Promise<{ body: string; contentType: string }>;
  /**
   * The per-device gauges (`lookout_device_*`) read `source` at each scrape: its devices are the
   * series, so one that leaves leaves /metrics. A later call replaces the source; the returned
   * function removes it (no device series until another is set).
   */
  setDeviceSource(source: () => Iterable<DeviceGaugeSample>): () => void;
}

/** The routes the hub serves (those with a handler), for plugins that describe them (OpenAPI). */
export interface HubRouteCatalog {
  list(): RouteEntry[];
  /** Every error code the hub may answer with: the core's and those its plugins declare. */
  errorCodes(): ErrorTableEntry[];
  /** The hub's plugins by name, with their manifests' descriptions (the OpenAPI tags). */
  pluginDescriptions(): Record<string, string | undefined>;
}

/** What `HubStateStore.load` found under a key. */
export interface StateLoad<T> {
  /** The saved value, checked by the caller's parse; undefined when none was saved or it was refused. */
  value?: T;
  /** When it was saved (epoch ms). */
  savedAt?: number;
  /** Why a saved value was refused (corrupt, truncated, too large, wrong shape): it was set aside and the caller starts empty. */
  warning?: string;
}

/**
 * Marks a snapshot its owner serialised itself, `{ [STATE_JSON]: true, json }`, so that a store
 * writes `json` as the value without serialising the whole again (the bus cache keeps each
 * device's JSON between saves). A registered symbol: plugins write `Symbol.for('lookout.state-json')`.
 */
export const STATE_JSON: unique symbol = Symbol.for('lookout.state-json') as never;

/** Keeps one key saved from its owner's snapshot; see `HubStateStore.keep`. */
export interface StateKeeper {
  /** The state changed: it is saved within the store's interval (several changes, one write). */
  changed(): void;
  /** Saves now if it changed since the last write. */
  flush(): Promise<void>;
}

/**
 * Everything the hub keeps across a restart goes through this one interface (DESIGN.md, "Hub
 * state behind one interface"), so that the backing (files under the data dir today, Redis when
 * replicas share it) changes in one place and no plugin writes files of its own. Values are JSON.
 * Both calls are bounded: a value over the store's byte bound is neither saved nor loaded.
 */
export interface HubStateStore {
  /** The value last saved under `key`; `parse` checks its shape (throws when wrong, and it is set aside). Never rejects. */
  load<T>(key: string, parse: (raw: unknown) => T): Promise<StateLoad<T>>;
  /**
   * Keeps `key` saved from `snapshot()`: after `changed()`, at most once per the store's interval
   * (a few seconds), and a last time when the hub stops. A failed write is logged and retried at
   * the next change; the previous saved value stays as it was. A large state may answer a promise:
   * what it took at the call is what is saved, and its JSON may be made over later turns.
   */
  keep(key: string, snapshot: () => unknown): StateKeeper;
}

/**
 * What `HubSharedState.claimOnce` did:
 * - `claimed`: this call made the claim (the first while any claim of the key lives);
 * - `already_claimed`: an earlier claim of the key lives (an A2A nonce seen before: a replay);
 * - `full` / `unavailable`: no claim could be made, and nothing is known of the key: the in-process
 *   store holds as many live claims as it may, or the store (Redis) cannot be reached. The caller
 *   fails closed (a refused request is retried later, a replay let through is not undone) and says
 *   so as a temporary refusal, never as "seen before";
 * - `holder_full`: the claim's holder (ClaimHolder) holds `max` live claims of the scope already:
 *   refused for that holder only, the others claim on.
 */
export type ClaimOutcome = 'claimed' | 'already_claimed' | 'full' | 'holder_full' | 'unavailable';

/** Who makes a claim (an A2A signer), and how many live claims of the scope it may hold at once. */
export interface ClaimHolder {
  id: string;
  max: number;
}

/**
 * State every hub replica must see alike (DESIGN.md "Hub state behind one interface"): claims that
 * succeed once fleet-wide (the A2A nonce cache) and small JSON records by scope (readiness grades,
 * device presence). In this process by default; scale-out adds a Redis implementation with the same
 * meaning (`claimOnce` is SET NX PX, a scope is a hash). Values are JSON, copied in and out.
 */
export interface HubSharedState {
  /**
   * Claims `key` in `scope` for `ttlMs`, once fleet-wide. Never rejects; its answer says which of
   * three things happened, since a caller must tell "seen before" from "could not look": see ClaimOutcome.
   * With `holder`, the claim also counts against the holder's bound (checked and counted atomically
   * with the claim), so one holder's flood cannot take the places of the others.
   */
  claimOnce(scope: string, key: string, ttlMs: number, holder?: ClaimHolder): Promise<ClaimOutcome>;
  put(scope: string, key: string, value: unknown): Promise<void>;
  get<T = unknown>(scope: string, key: string): Promise<T | undefined>;
  /** Every record of a scope. */
  entries<T = unknown>(scope: string): Promise<Map<string, T>>;
  delete(scope: string, key: string): Promise<void>;
  /**
   * Hands `value` (JSON, small) to the other replicas' `onBroadcast(channel)` listeners, never to
   * this hub's own. Best effort, like a log line: a replica that is away or cut off misses it. With
   * one hub (in memory) nobody else listens.
   */
  broadcast(channel: string, value: unknown): void;
  onBroadcast(channel: string, listener: (value: unknown) => void): () => void;
}

export const HUB_INFO: ServiceToken<HubInfo> = serviceToken('hub.info');
export const HUB_METRICS: ServiceToken<HubMetricsPort> = serviceToken('hub.metrics');
export const HUB_ROUTES: ServiceToken<HubRouteCatalog> = serviceToken('hub.routes');
export const HUB_STATE: ServiceToken<HubStateStore> = serviceToken('hub.state');
export const HUB_SHARED: ServiceToken<HubSharedState> = serviceToken('hub.shared');
