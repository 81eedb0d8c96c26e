import type { BusPort, MessageHandler, PublishOptions } from 'lookout/core/host';
import type { IngestRelay } from './ingest-relay.js';

/**
 * The bus a replica's plugins see: publishing and every other subscription go to the broker as
 * usual, while subscriptions to device topics (`devices/…`) are served by the ingest relay, so
 * that each replica's bus-cache receives every device message in the one order of the shared
 * stream, whichever replica the broker handed it to. Plugins do not know they run as a replica.
 */
export class ReplicatedBus implements BusPort {
  constructor(
    private readonly broker: BusPort,
    private readonly relay: IngestRelay,
  ) {}

  publish(topic: string, payload: Buffer | string, options?: PublishOptions): Promise<void> {
    return this.broker.publish(topic, payload, options);
  }

  subscribe(filter: string, handler: MessageHandler, options?: { qos?: 0 | 1 | 2 }): Promise<() => Promise<void>> {
    if (filter.startsWith('devices/')) return this.relay.subscribe(filter, handler);
    return this.broker.subscribe(filter, handler, options);
  }

  get connected(): boolean {
    return this.broker.connected && this.relay.connected;
  }

  onConnect(listener: () => void): () => void {
    return this.broker.onConnect(listener);
  }

  /** The owner (startHub) closes the relay and the broker connection itself. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
