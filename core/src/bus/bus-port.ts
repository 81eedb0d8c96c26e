/** What the core needs of a message bus. The MQTT adapter and the in-process bus implement it. */
export interface PublishOptions {
  qos?: 0 | 1 | 2;
  retain?: boolean;
}

/** Receives a message on a subscribed topic; `meta.retain` is set for a retained message delivered on subscribe. */
export type MessageHandler = (topic: string, payload: Buffer, meta: { retain: boolean }) => void;

/** The broker connection the runtime owns (MQTT, or MemoryBus in tests); plugins get a PluginBus limited to their manifest. */
export interface BusPort {
  publish(topic: string, payload: Buffer | string, options?: PublishOptions): Promise<void>;
  /** Resolves once the broker acknowledged the subscription; the returned function unsubscribes. */
  subscribe(filter: string, handler: MessageHandler, options?: { qos?: 0 | 1 | 2 }): Promise<() => Promise<void>>;
  readonly connected: boolean;
  /** Called after every (re)connect, so owners can re-announce (hello, retained status). */
  onConnect(listener: () => void): () => void;
  close(): Promise<void>;
}

/**
 * True when an MQTT topic matches a filter with `+` and `#` wildcards (`a/#` matches `a` too). Walks
 * both strings level by level without splitting them: the embedded broker asks it for every copy it
 * forwards, for each filter of the receiving client (subscription-identifiers.ts).
 */
export function topicMatches(filter: string, topic: string): boolean {
  let f = 0;
  let t = 0; // past topic.length once the topic has no level left
  for (;;) {
    const fEnd = levelEnd(filter, f);
    if (fEnd - f === 1 && filter[f] === '#') return true;
    if (t > topic.length) return false;
    const tEnd = levelEnd(topic, t);
    const plus = fEnd - f === 1 && filter[f] === '+';
    if (!plus && (fEnd - f !== tEnd - t || !filter.startsWith(topic.slice(t, tEnd), f))) return false;
    if (fEnd === filter.length) return tEnd === topic.length;
    f = fEnd + 1;
    t = tEnd + 1;
  }
}

function levelEnd(s: string, from: number): number {
  const slash = s.indexOf('/', from);
  return slash === -1 ? s.length : slash;
}

/** The outbox's figures, as health reports them. */
export interface OutboxStats {
  /** Messages held now (waiting or in flight), and their bytes. */
  queued: number;
  queued_bytes: number;
  /** Messages the outbox took since start (recovered ones included). */
  kept: number;
  /** Messages the broker acknowledged. */
  delivered: number;
  /** Messages dropped, oldest first, because the bound was reached. */
  dropped: number;
  /** Messages found on disk at start, from a previous run. */
  recovered: number;
  /** Records found torn at start (a crash mid-write) and skipped. */
  torn: number;
  /** Messages written to disk (those delivered before the next flush never are). */
  written: number;
  max_messages: number;
  max_bytes: number;
}

/** How a device's bus is doing, as health reports it. */
export interface BusHealth {
  state: 'connected' | 'down';
  /** QoS 1 messages waiting for the broker, delivered, dropped… */
  outbox: OutboxStats;
  /** QoS 0 messages published while the broker was away: dropped, as QoS 0 allows. */
  qos0_dropped: number;
  /** Retained topics whose latest message waits for the next connection. */
  retained_waiting: number;
}
