import { LookoutError } from 'lookout/core';
import type { BusPort, MessageHandler, PublishOptions } from 'lookout/core/host';

interface PendingSubscription {
  filter: string;
  handler: MessageHandler;
  options: { qos?: 0 | 1 | 2 } | undefined;
  release?: () => Promise<void>;
  removed: boolean;
}

/** Publishes made before the connection that are kept for it; more is a plugin bug, not a queue. */
const MAX_EARLY_PUBLISHES = 1000;

/**
 * The bus plugins get while they start, before the runtime connects. The device connects only
 * after every plugin started, so that nothing is announced (hello, online status) before every tool
 * is registered, and so that the last-will carries the status plugin's message.
 *
 * Until `attach`: `subscribe` records the subscription and resolves at once (it is made on the real
 * bus at attach, before the first connect, so a persistent session's queued messages find it);
 * `publish` keeps the message for the connection and resolves; `connected` is false and onConnect
 * listeners wait for the real connect. After `attach` everything goes straight to the real bus.
 */
export class LateBus implements BusPort {
  private inner: BusPort | undefined;
  private readonly subscriptions = new Set<PendingSubscription>();
  private readonly earlyPublishes: { topic: string; payload: Buffer | string; options: PublishOptions | undefined }[] = [];
  private readonly listeners = new Map<() => void, (() => void) | undefined>();
  private closed = false;

  get connected(): boolean {
    return !this.closed && this.inner?.connected === true;
  }

  async publish(topic: string, payload: Buffer | string, options?: PublishOptions): Promise<void> {
    if (this.closed) throw new LookoutError('bus_closed');
    if (this.inner) return this.inner.publish(topic, payload, options);
    if (this.earlyPublishes.length >= MAX_EARLY_PUBLISHES) {
      throw new LookoutError('bus_publish_failed', `more than ${MAX_EARLY_PUBLISHES} messages published before the device connected`, { details: { topic } });
    }
    this.earlyPublishes.push({ topic, payload, options });
  }

  async subscribe(filter: string, handler: MessageHandler, options?: { qos?: 0 | 1 | 2 }): Promise<() => Promise<void>> {
    if (this.closed) throw new LookoutError('bus_closed');
    if (this.inner) return this.inner.subscribe(filter, handler, options);
    const sub: PendingSubscription = { filter, handler, options, removed: false };
    this.subscriptions.add(sub);
    return async () => {
      sub.removed = true;
      this.subscriptions.delete(sub);
      await sub.release?.();
    };
  }

  onConnect(listener: () => void): () => void {
    this.listeners.set(listener, this.inner?.onConnect(listener));
    return () => {
      this.listeners.get(listener)?.();
      this.listeners.delete(listener);
    };
  }

  /**
   * Hands over to the real bus: subscriptions first, then connect listeners. Call it before the
   * real bus connects; it resolves once the real bus acknowledged every subscription (with MQTT,
   * after its first connect). Then `flush` sends what was published early.
   */
  async attach(inner: BusPort): Promise<void> {
    if (this.inner) throw new LookoutError('internal', 'LateBus.attach called twice');
    this.inner = inner;
    const acks = [...this.subscriptions].map(async (sub) => {
      const release = await inner.subscribe(sub.filter, sub.handler, sub.options);
      if (sub.removed) await release();
      else sub.release = release;
    });
    for (const listener of this.listeners.keys()) this.listeners.set(listener, inner.onConnect(listener));
    await Promise.all(acks);
  }

  /**
   * Sends the messages published before the connection, in order: all handed to the real bus at
   * once, so that nothing published meanwhile goes between them; resolves when it took them all.
   */
  async flush(): Promise<void> {
    const inner = this.inner;
    if (!inner) throw new LookoutError('internal', 'LateBus.flush before attach');
    await Promise.all(this.earlyPublishes.splice(0).map((p) => inner.publish(p.topic, p.payload, p.options)));
  }

  /** Closes the real bus, if any. */
  async close(): Promise<void> {
    this.closed = true;
    this.subscriptions.clear();
    this.listeners.clear();
    await this.inner?.close();
  }
}
