import { topicMatches } from 'lookout/core';
import type { MessageHandler } from 'lookout/core/host';

export type Qos = 0 | 1 | 2;

/**
 * Topics whose matches are kept. A hub hears a few topics per device (hello, status, telemetry, dets,
 * health…): 10 000 distinct topics, the bound this had, were passed at ~2 000 devices, and then the
 * whole map was dropped again and again, so every message matched every filter anew (7 % of the
 * hub's CPU at 5 000 devices). A kept topic costs its string and a map entry: the matches
 * themselves are shared by every topic with the same matching entries.
 */
const MAX_MATCHED_TOPICS = 200_000;
/** And their characters, so that a flood of long made-up topics keeps the map small (~16 MB at most). */
const MAX_MATCHED_CHARS = 8_000_000;
const MAX_CACHED_TOPIC_LENGTH = 512;
const MAX_SHARED_MATCHES = 10_000;

export interface SubscriptionEntry {
  readonly filter: string;
  readonly handler: MessageHandler;
  readonly qos: Qos;
}

/** What a topic matches: its handlers, and each handler under the one filter it is answered under (see handlersForCopy). */
interface Matches {
  handlers: MessageHandler[];
  byFilter: Map<string, MessageHandler[]>;
}

/**
 * The bus's own record of what it subscribed, independent of the broker's session: it is what is
 * restored after a reconnect to a broker that lost the session, and what incoming messages are
 * dispatched against. Several handlers may share one broker filter.
 */
export class SubscriptionTable {
  /** Each entry with a number of its own, which names it in the shared matches' keys. */
  private readonly entries = new Map<SubscriptionEntry, number>();
  private nextEntry = 0;
  /**
   * Matches per topic, valid until the entries change. A hub sees the same few topics per device
   * thousands of times a second; matching every filter each time was a fifth of its ingest CPU.
   */
  private readonly matched = new Map<string, Matches>();
  private matchedChars = 0;
  /** The matches themselves, by the entries matched: topics of the same shape share one. */
  private readonly shared = new Map<string, Matches>();

  add(entry: SubscriptionEntry): void {
    if (!this.entries.has(entry)) this.entries.set(entry, this.nextEntry++);
    this.forget();
  }

  /** Removes the entry; true when no other entry uses its filter any more (time to unsubscribe). */
  remove(entry: SubscriptionEntry): boolean {
    if (!this.entries.delete(entry)) return false;
    this.forget();
    return !this.hasFilter(entry.filter);
  }

  hasFilter(filter: string): boolean {
    for (const e of this.entries.keys()) if (e.filter === filter) return true;
    return false;
  }

  /** Each filter once, with the highest QoS any of its handlers asked for. */
  filters(): Map<string, Qos> {
    const out = new Map<string, Qos>();
    for (const e of this.entries.keys()) out.set(e.filter, Math.max(out.get(e.filter) ?? 0, e.qos) as Qos);
    return out;
  }

  qosOf(filter: string): Qos {
    return this.filters().get(filter) ?? 0;
  }

  /**
   * The distinct handlers whose filters match `topic`. A handler registered under overlapping
   * filters (`devices/+/telemetry` and `devices/+/telemetry/#`) is called once per message, so
   * a consumer that counts messages counts each once.
   */
  handlersFor(topic: string): MessageHandler[] {
    return this.matchesOf(topic).handlers;
  }

  /**
   * The handlers one copy of a message reaches when the broker says which of our filters it was sent
   * for (MQTT 5 subscription identifiers). Brokers differ: aedes sends one copy naming every
   * matching filter, mosquitto one copy per matching filter. Either way each handler is called once:
   * under the first (in sort order) of its filters that match the topic, on the copy that names it.
   */
  handlersForCopy(topic: string, copyFilters: Iterable<string>): MessageHandler[] {
    const { byFilter } = this.matchesOf(topic);
    const out: MessageHandler[] = [];
    for (const filter of copyFilters) out.push(...(byFilter.get(filter) ?? []));
    return out;
  }

  private matchesOf(topic: string): Matches {
    const cached = this.matched.get(topic);
    if (cached) return cached;
    const entries = this.matchingEntries(topic);
    const key = entries.map((e) => this.entries.get(e)).join(',');
    let matches = this.shared.get(key);
    if (!matches) {
      matches = { handlers: [...new Set(entries.map((e) => e.handler))], byFilter: byFirstFilter(entries) };
      // As many as sets of entries that match some topic: a few in practice, bounded all the same.
      if (this.shared.size >= MAX_SHARED_MATCHES) this.shared.clear();
      this.shared.set(key, matches);
    }
    // Long topics are not kept: V8 hashes very long strings by length alone, so a flood of them
    // would collide in the map. Bounded too: topics come from the wire.
    if (topic.length > MAX_CACHED_TOPIC_LENGTH) return matches;
    if (this.matched.size >= MAX_MATCHED_TOPICS || this.matchedChars >= MAX_MATCHED_CHARS) this.forgetTopics();
    this.matched.set(topic, matches);
    this.matchedChars += topic.length;
    return matches;
  }

  private matchingEntries(topic: string): SubscriptionEntry[] {
    // MQTT: filters starting with a wildcard never match `$SYS/...`-style topics.
    const system = topic.startsWith('$');
    const out: SubscriptionEntry[] = [];
    for (const e of this.entries.keys()) {
      if (system && (e.filter.startsWith('+') || e.filter.startsWith('#'))) continue;
      if (topicMatches(e.filter, topic)) out.push(e);
    }
    return out;
  }

  private forget(): void {
    this.forgetTopics();
    this.shared.clear();
  }

  private forgetTopics(): void {
    this.matched.clear();
    this.matchedChars = 0;
  }

  clear(): void {
    this.entries.clear();
    this.forget();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Topics whose matches are kept now. */
  get keptTopics(): number {
    return this.matched.size;
  }
}

/** Each handler under the first (in sort order) of its filters among the entries. */
function byFirstFilter(entries: readonly SubscriptionEntry[]): Map<string, MessageHandler[]> {
  const first = new Map<MessageHandler, string>();
  for (const e of entries) {
    const held = first.get(e.handler);
    if (held === undefined || e.filter < held) first.set(e.handler, e.filter);
  }
  const out = new Map<string, MessageHandler[]>();
  for (const [handler, filter] of first) out.set(filter, [...(out.get(filter) ?? []), handler]);
  return out;
}
