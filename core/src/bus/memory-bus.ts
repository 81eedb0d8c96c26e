import { topicMatches, type BusPort, type MessageHandler, type PublishOptions } from './bus-port.js';

/**
 * An in-process bus with MQTT semantics (wildcards, retained messages). Used where no broker is
 * wanted: the one-shot agent modes (`--health`, `--tool`) and unit tests of the loader.
 */
export class MemoryBus implements BusPort {
  private readonly subscriptions = new Set<{ filter: string; handler: MessageHandler }>();
  private readonly retained = new Map<string, Buffer>();
  private readonly connectListeners = new Set<() => void>();
  private closed = false;
  readonly published: { topic: string; payload: Buffer; options: PublishOptions }[] = [];
  /** Handlers and connect listeners that threw: counted, never passed to the publisher (as MqttBus). */
  handlerErrors = 0;

  get connected(): boolean {
    return !this.closed;
  }

  async publish(topic: string, payload: Buffer | string, options: PublishOptions = {}): Promise<void> {
    if (this.closed) throw new Error('bus is closed');
    const buf = typeof payload === 'string' ? Buffer.from(payload) : payload;
    this.published.push({ topic, payload: buf, options });
    if (options.retain) {
      if (buf.length === 0) this.retained.delete(topic);
      else this.retained.set(topic, buf);
    }
    // One call per handler, however many of its filters match (as MqttBus and MQTT 3.1.1 brokers do).
    const called = new Set<MessageHandler>();
    for (const sub of [...this.subscriptions]) {
      if (called.has(sub.handler) || !topicMatches(sub.filter, topic)) continue;
      called.add(sub.handler);
      this.guard(() => sub.handler(topic, buf, { retain: false }));
    }
  }

  async subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>> {
    const sub = { filter, handler };
    this.subscriptions.add(sub);
    for (const [topic, payload] of this.retained) if (topicMatches(filter, topic)) this.guard(() => handler(topic, payload, { retain: true }));
    return async () => {
      this.subscriptions.delete(sub);
    };
  }

  onConnect(listener: () => void): () => void {
    this.connectListeners.add(listener);
    if (!this.closed) queueMicrotask(() => this.guard(listener));
    return () => this.connectListeners.delete(listener);
  }

  /** One subscriber's failure must not fail the publisher or the other subscribers. */
  private guard(fn: () => unknown): void {
    try {
      const result = fn();
      if (result instanceof Promise) result.catch(() => this.handlerErrors++);
    } catch {
      this.handlerErrors++;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscriptions.clear();
  }
}
