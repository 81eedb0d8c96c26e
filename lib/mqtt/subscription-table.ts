import { topicMatches } from 'lookout/core';
import type { MessageHandler } from 'lookout/core/host';

export type Qos = 0 | 1 | 2;

const MAX_MATCHED_TOPICS = 10_000;
const MAX_CACHED_TOPIC_LENGTH = 512;

export interface SubscriptionEntry {
  readonly filter: string;
  readonly handler: MessageHandler;
  readonly qos: Qos;
}

/**
 * The bus's own record of what it subscribed, independent of the broker's session: it is what is
 * restored after a reconnect to a broker that lost the session, and what incoming messages are
 * dispatched against. Several handlers may share one broker filter.
 */
export class SubscriptionTable {
  private readonly entries = new Set<SubscriptionEntry>();
  /**
   * Handlers per topic, valid until the entries change. A hub sees the same few topics per device
   * thousands of times a second; matching every filter each time was a fifth of its ingest CPU.
   */
  private readonly matched = new Map<string, MessageHandler[]>();
  /** Per topic, the handlers by the one filter each is answered under (see handlersForCopy). */
  private readonly matchedByFilter = new Map<string, Map<string, MessageHandler[]>>();

  add(entry: SubscriptionEntry): void {
    this.entries.add(entry);
    this.forget();
  }

  /** Removes the entry; true when no other entry uses its filter any more (time to unsubscribe). */
  remove(entry: SubscriptionEntry): boolean {
    if (!this.entries.delete(entry)) return false;
    this.forget();
    return !this.hasFilter(entry.filter);
  }

  hasFilter(filter: string): boolean {
    for (const e of this.entries) if (e.filter === filter) return true;
    return false;
  }

  /** Each filter once, with the highest QoS any of its handlers asked for. */
  filters(): Map<string, Qos> {
    const out = new Map<string, Qos>();
    for (const e of this.entries) out.set(e.filter, Math.max(out.get(e.filter) ?? 0, e.qos) as Qos);
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
    const cached = this.matched.get(topic);
    if (cached) return cached;
    const handlers = this.match(topic);
    // Long topics are not kept: V8 hashes very long strings by length alone, so a flood of them
    // would collide in the map. Bounded too: topics come from the wire.
    if (topic.length > MAX_CACHED_TOPIC_LENGTH) return handlers;
    if (this.matched.size >= MAX_MATCHED_TOPICS) this.matched.clear();
    this.matched.set(topic, handlers);
    return handlers;
  }

  /**
   * The handlers one copy of a message reaches when the broker says which of our filters it was sent
   * for (MQTT 5 subscription identifiers). Brokers differ: aedes sends one copy naming every
   * matching filter, mosquitto one copy per matching filter. Either way each handler is called once:
   * under the first (in sort order) of its filters that match the topic, on the copy that names it.
   */
  handlersForCopy(topic: string, copyFilters: Iterable<string>): MessageHandler[] {
    let byFilter = this.matchedByFilter.get(topic);
    if (!byFilter) {
      byFilter = this.matchByFilter(topic);
      if (topic.length <= MAX_CACHED_TOPIC_LENGTH) {
        if (this.matchedByFilter.size >= MAX_MATCHED_TOPICS) this.matchedByFilter.clear();
        this.matchedByFilter.set(topic, byFilter);
      }
    }
    const out: MessageHandler[] = [];
    for (const filter of copyFilters) out.push(...(byFilter.get(filter) ?? []));
    return out;
  }

  private matchByFilter(topic: string): Map<string, MessageHandler[]> {
    const first = new Map<MessageHandler, string>();
    for (const e of this.matchingEntries(topic)) {
      const held = first.get(e.handler);
      if (held === undefined || e.filter < held) first.set(e.handler, e.filter);
    }
    const out = new Map<string, MessageHandler[]>();
    for (const [handler, filter] of first) out.set(filter, [...(out.get(filter) ?? []), handler]);
    return out;
  }

  private match(topic: string): MessageHandler[] {
    return [...new Set([...this.matchingEntries(topic)].map((e) => e.handler))];
  }

  private *matchingEntries(topic: string): Iterable<SubscriptionEntry> {
    // MQTT: filters starting with a wildcard never match `$SYS/...`-style topics.
    const system = topic.startsWith('$');
    for (const e of this.entries) {
      if (system && (e.filter.startsWith('+') || e.filter.startsWith('#'))) continue;
      if (topicMatches(e.filter, topic)) yield e;
    }
  }

  private forget(): void {
    this.matched.clear();
    this.matchedByFilter.clear();
  }

  clear(): void {
    this.entries.clear();
    this.forget();
  }

  get size(): number {
    return this.entries.size;
  }
}
