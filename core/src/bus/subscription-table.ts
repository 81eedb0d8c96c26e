import { topicMatches, type MessageHandler } from './bus-port.js';

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

  add(entry: SubscriptionEntry): void {
    this.entries.add(entry);
    this.matched.clear();
  }

  /** Removes the entry; true when no other entry uses its filter any more (time to unsubscribe). */
  remove(entry: SubscriptionEntry): boolean {
    if (!this.entries.delete(entry)) return false;
    this.matched.clear();
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

  private match(topic: string): MessageHandler[] {
    const out = new Set<MessageHandler>();
    // MQTT: filters starting with a wildcard never match `$SYS/...`-style topics.
    const system = topic.startsWith('$');
    for (const e of this.entries) {
      if (system && (e.filter.startsWith('+') || e.filter.startsWith('#'))) continue;
      if (topicMatches(e.filter, topic)) out.add(e.handler);
    }
    return [...out];
  }

  clear(): void {
    this.entries.clear();
    this.matched.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
