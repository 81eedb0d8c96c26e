import type { BusPort, MessageHandler, PublishOptions } from 'lookout/core/host';

/** Where a hub's device topics (`devices/…`, the ingest) come from when not from its bus connection. */
export interface DeviceTopicSource {
  subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>>;
  readonly connected: boolean;
}

/** The broker connection the rest goes over; a filter an earlier run subscribed on it is ended there. */
export type BrokerBus = BusPort & { unsubscribeUnheld?(filter: string): Promise<void> };

/**
 * The bus the hub's plugins see: publishing and every other subscription go to the broker as usual,
 * while subscriptions to device topics (`devices/…`) are served by `source`: a replica's ingest relay
 * (every replica's bus-cache receives every device message in the one order of the shared stream,
 * whichever replica the broker handed it to) or a plain hub's direct ingest (a lean session of its
 * own). Plugins do not know which.
 */
export class DeviceTopicsBus implements BusPort {
  constructor(
    private readonly broker: BrokerBus,
    private readonly source: DeviceTopicSource,
  ) {}

  publish(topic: string, payload: Buffer | string, options?: PublishOptions): Promise<void> {
    return this.broker.publish(topic, payload, options);
  }

  subscribe(filter: string, handler: MessageHandler, options?: { qos?: 0 | 1 | 2 }): Promise<() => Promise<void>> {
    if (!filter.startsWith('devices/')) return this.broker.subscribe(filter, handler, options);
    // A persistent session of an earlier run (or version) that took device topics on the bus
    // connection would otherwise go on receiving each of them, to drop it.
    void this.broker.unsubscribeUnheld?.(filter);
    return this.source.subscribe(filter, handler);
  }

  get connected(): boolean {
    return this.broker.connected && this.source.connected;
  }

  onConnect(listener: () => void): () => void {
    return this.broker.onConnect(listener);
  }

  /** The owner (startHub) closes the source and the broker connection itself. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
