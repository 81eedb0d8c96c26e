import { LookoutError } from 'lookout/core';
import { silentBusLogger, type BusLogger } from './bus-logger.js';
import type { BusHealth, BusPort, MessageHandler, PublishOptions } from 'lookout/core/host';

export type { BusHealth } from 'lookout/core/host';
import { assertPublishTopic } from './mqtt-topics.js';
import type { Outbox } from './outbox.js';

/**
 * A bus that never makes its publishers wait for the broker. QoS 1 (and 2) messages go through a
 * bounded, disk-backed outbox and reach the broker in order, at least once, whenever it is there;
 * at most `window` are in flight at a time. QoS 0 messages while the broker is away are dropped and
 * counted. A retained message is state, not an event: offline only the latest per topic is kept,
 * and it is sent on the next connection before the connect listeners run, so that what they
 * publish (the current status) is the last word.
 *
 * On every connect the listeners run first and what they publish there and then (hello, online
 * status) goes straight to the broker, ahead of the backlog, as on a first start; then the
 * backlog drains. Subscriptions go to the inner bus as they are.
 */
export class OutboxBus implements BusPort {
  private readonly listeners = new Set<() => void>();
  private readonly retained = new Map<string, { payload: Buffer; qos: 0 | 1 | 2 }>();
  private readonly log: BusLogger;
  private readonly window: number;
  private readonly offConnect: () => void;
  private inFlight = 0;
  private qos0Dropped = 0;
  /** Set while the connect listeners run: their publishes go first. */
  private joining = false;
  private ready = false;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly inner: BusPort,
    private readonly outbox: Outbox,
    options: { window?: number; logger?: BusLogger } = {},
  ) {
    this.window = options.window ?? 100;
    this.log = options.logger ?? silentBusLogger;
    this.offConnect = inner.onConnect(() => this.joined());
  }

  get connected(): boolean {
    return !this.closed && this.inner.connected;
  }

  health(): BusHealth {
    return { state: this.connected ? 'connected' : 'down', outbox: this.outbox.stats(), qos0_dropped: this.qos0Dropped, retained_waiting: this.retained.size };
  }

  async publish(topic: string, payload: Buffer | string, options: PublishOptions = {}): Promise<void> {
    if (this.closed) throw new LookoutError('bus_closed');
    assertPublishTopic(topic);
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const qos = options.qos ?? 1;
    if (options.retain) {
      if (this.connected) return this.inner.publish(topic, body, { qos, retain: true });
      this.retained.set(topic, { payload: body, qos });
      return;
    }
    if (this.joining) return this.inner.publish(topic, body, { qos });
    if (qos === 0) {
      if (this.connected) return this.inner.publish(topic, body, { qos });
      this.qos0Dropped++;
      return;
    }
    this.outbox.put(topic, body, qos);
    this.pump();
  }

  subscribe(filter: string, handler: MessageHandler, options?: { qos?: 0 | 1 | 2 }): Promise<() => Promise<void>> {
    return this.inner.subscribe(filter, handler, options);
  }

  onConnect(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.ready && this.connected) queueMicrotask(() => this.listeners.has(listener) && this.run(listener));
    return () => this.listeners.delete(listener);
  }

  /** The inner bus's own close (DISCONNECT, in-flight publishes given back), then the outbox written whole. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.ready = false;
      this.offConnect();
      this.listeners.clear();
      await this.inner.close();
      await this.outbox.close();
    })();
    return this.closing;
  }

  private joined(): void {
    if (this.closed) return;
    for (const [topic, { payload, qos }] of this.retained) this.send(this.inner.publish(topic, payload, { qos, retain: true }), topic);
    this.retained.clear();
    this.joining = true;
    try {
      for (const listener of [...this.listeners]) this.run(listener);
    } finally {
      this.joining = false;
    }
    this.ready = true;
    this.pump();
  }

  /** Hands the oldest waiting messages to the broker, up to the window. */
  private pump(): void {
    while (this.connected && this.inFlight < this.window) {
      const message = this.outbox.take();
      if (!message) return;
      this.inFlight++;
      this.inner.publish(message.topic, message.payload, { qos: message.qos }).then(
        () => {
          this.inFlight--;
          this.outbox.delivered(message);
          this.pump();
        },
        (err: unknown) => {
          // Closed, or refused: it waits again in its place and goes at the next pump.
          this.inFlight--;
          this.outbox.retry(message);
          if (!this.closed) this.log.warn({ err, topic: message.topic }, 'outbox publish failed, kept for the next attempt');
        },
      );
    }
  }

  private send(publish: Promise<void>, topic: string): void {
    publish.catch((err: unknown) => {
      if (!this.closed) this.log.warn({ err, topic }, 'retained message not published');
    });
  }

  private run(listener: () => void): void {
    try {
      const result: unknown = listener();
      if (result instanceof Promise) result.catch((err: unknown) => this.log.error({ err }, 'bus onConnect listener failed'));
    } catch (err) {
      this.log.error({ err }, 'bus onConnect listener failed');
    }
  }
}
