import type { IPublishPacket } from 'mqtt';
import type { MessageHandler } from 'lookout/core/host';
import type { Logger } from 'lookout/core';
import { SharedSubscriber, SubscriptionTable } from 'lookout/lib/mqtt';
import type { DeviceTopicSource } from './device-topics-bus.js';

/** What take() answers: a message is done with once its handlers have run (they are not awaited, as on the bus). */
const TAKEN = Promise.resolve();
/** Messages the broker may hand over before their acknowledgements: they leave once per event-loop turn. */
const RECEIVE_MAXIMUM = 1000;
/** The session outlives the hub's restarts, as the bus connection's does: what devices sent meanwhile waits for it. */
const SESSION_NEVER_EXPIRES = 0xffffffff;

export interface DirectIngestOptions {
  /** The broker (MQTT 5), credentials in the URL or below. */
  mqttUrl: string;
  username?: string;
  password?: string;
  /** With mqtts://: the CAs the broker's certificate must chain to. */
  ca?: string[];
  /** Stable across restarts, so that the broker keeps the session for the hub. */
  clientId: string;
  logger: Logger;
}

/**
 * A plain hub's device topics (its ingest: 10 to 20 messages a second per device) on a broker
 * session of their own, spoken by SharedSubscriber rather than MQTT.js. MQTT.js takes each PUBLISH
 * through its generic packet handling and encodes and writes each PUBACK on its own: measured with
 * `npm run bench -- hub-ingest`, the hub spent 11 µs of CPU a message that way and 8.5 µs this way.
 * Here a PUBLISH goes from the parser to its handlers, and the acknowledgements of one event-loop
 * turn leave in one write. Needs MQTT 5 (subscription identifiers, session expiry): on a broker that
 * speaks only 3.1.1 the device topics stay on the bus connection (start-hub.ts).
 */
export class DirectIngest implements DeviceTopicSource {
  private readonly handlers = new SubscriptionTable();
  /** Each filter's subscription identifier: a copy names the filters it was sent for (brokers differ on overlapping ones). */
  private readonly ids = new Map<string, number>();
  private readonly filtersById = new Map<number, string>();
  private readonly subscriber: SharedSubscriber;
  private started: Promise<void> | undefined;

  constructor(private readonly options: DirectIngestOptions) {
    this.subscriber = new SharedSubscriber({
      url: options.mqttUrl,
      clientId: options.clientId,
      sessionExpirySec: SESSION_NEVER_EXPIRES,
      receiveMaximum: RECEIVE_MAXIMUM,
      logger: options.logger,
      ...(options.ca ? { ca: options.ca } : {}),
      ...(options.username !== undefined ? { username: options.username } : {}),
      ...(options.password !== undefined ? { password: options.password } : {}),
      onMessage: (packet) => this.take(packet),
    });
  }

  get connected(): boolean {
    return this.subscriber.connected;
  }

  /** Connects (once); rejects when the broker refuses or does not answer. */
  start(): Promise<void> {
    this.started ??= this.subscriber.start();
    return this.started;
  }

  /** Subscribed again for each new handler, as the bus does, so that it gets the retained messages (the others recognise them as held). */
  async subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>> {
    await this.start();
    const entry = { filter, handler, qos: 1 as const };
    this.handlers.add(entry);
    let id = this.ids.get(filter);
    if (id === undefined) {
      id = this.ids.size + 1;
      this.ids.set(filter, id);
      this.filtersById.set(id, filter);
    }
    try {
      await this.subscriber.subscribe({ filter, id });
    } catch (err) {
      this.handlers.remove(entry);
      throw err;
    }
    return () => {
      this.handlers.remove(entry);
      return Promise.resolve();
    };
  }

  close(): Promise<void> {
    return this.subscriber.close();
  }

  private take(packet: IPublishPacket): Promise<void> {
    const { topic } = packet;
    const payload = packet.payload as Buffer;
    const meta = { retain: packet.retain };
    for (const handler of this.handlersOf(topic, packet.properties?.subscriptionIdentifier)) {
      try {
        const result: unknown = handler(topic, payload, meta);
        if (result instanceof Promise) result.catch((err: unknown) => this.failed(err, topic));
      } catch (err) {
        this.failed(err, topic);
      }
    }
    return TAKEN;
  }

  /** By the subscription identifiers the copy carries (each handler once, however many copies), else by its topic. */
  private handlersOf(topic: string, ids: number | number[] | undefined): MessageHandler[] {
    if (ids === undefined) return this.handlers.handlersFor(topic);
    const filters: string[] = [];
    for (const id of Array.isArray(ids) ? ids : [ids]) {
      const filter = this.filtersById.get(id);
      if (filter !== undefined) filters.push(filter);
    }
    return this.handlers.handlersForCopy(topic, filters);
  }

  private failed(err: unknown, topic: string): void {
    this.options.logger.error({ err, topic: topic.slice(0, 256) }, 'ingest: a device topic handler failed');
  }
}
