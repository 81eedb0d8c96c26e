/** What the core needs of a message bus. The MQTT adapter and the in-process bus implement it. */
export interface PublishOptions {
  qos?: 0 | 1 | 2;
  retain?: boolean;
}

export type MessageHandler = (topic: string, payload: Buffer, meta: { retain: boolean }) => void;

export interface BusPort {
  publish(topic: string, payload: Buffer | string, options?: PublishOptions): Promise<void>;
  /** Resolves once the broker acknowledged the subscription; the returned function unsubscribes. */
  subscribe(filter: string, handler: MessageHandler, options?: { qos?: 0 | 1 | 2 }): Promise<() => Promise<void>>;
  readonly connected: boolean;
  /** Called after every (re)connect, so owners can re-announce (hello, retained status). */
  onConnect(listener: () => void): () => void;
  close(): Promise<void>;
}

/** True when an MQTT topic matches a filter with `+` and `#` wildcards. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}
