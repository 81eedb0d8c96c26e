import type { IPublishPacket } from 'mqtt';
import type { MessageHandler } from 'lookout/core/host';
import type { Logger } from 'lookout/core';
import { IdentifiedFilters, runHandlers, SharedSubscriber, SubscriptionTable, type SubscriptionEntry } from 'lookout/lib/mqtt';
import type { DeviceTopicSource } from './device-topics-bus.js';

/** What take() answers: a message is done with once its handlers have run (they are not awaited, as on the bus). */
const TAKEN = Promise.resolve();
/** Messages the broker may hand over before their acknowledgements: those of one event-loop turn leave together. */
const RECEIVE_MAXIMUM = 1000;
/**
 * How long the broker keeps the session while the hub is away. What a broker blip holds back reaches
 * the hub when it reconnects; a hub stopped cleanly ended its subscriptions, so nothing waits for it,
 * and a session left behind (a hub moved to replicas, or gone) ends within the hour.
 */
const SESSION_EXPIRY_SEC = 3600;
/** The URL schemes SharedSubscriber speaks (MQTT over TCP or TLS); over WebSockets the device topics stay on the bus. */
const DIRECT_SCHEMES = new Set(['mqtt:', 'tcp:', 'mqtts:', 'ssl:', 'tls:']);

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
 * through its generic packet handling and encodes and writes each PUBACK on its own; here a PUBLISH
 * goes from the parser to its handlers, and the acknowledgements of one event-loop turn leave in one
 * write: `npm run bench -- hub-ingest`, six runs alternating with the hub before, 9.6–11.0 µs of CPU
 * a message before and 8.1–9.5 µs with it. Used where the bus connection found an MQTT 5 broker over
 * TCP or TLS that has subscription identifiers (start-hub.ts); elsewhere the device topics stay on
 * the bus connection.
 */
export class DirectIngest implements DeviceTopicSource {
  private readonly handlers = new SubscriptionTable();
  private readonly ids = new IdentifiedFilters(this.handlers);
  private readonly subscriber: SharedSubscriber;
  private started: Promise<void> | undefined;

  /** Whether the direct ingest can speak to the broker at `url` at all (the scheme; the broker is asked at start). */
  static speaks(url: string): boolean {
    try {
      return DIRECT_SCHEMES.has(new URL(url).protocol);
    } catch {
      return false;
    }
  }

  constructor(private readonly options: DirectIngestOptions) {
    this.subscriber = new SharedSubscriber({
      url: options.mqttUrl,
      clientId: options.clientId,
      sessionExpirySec: SESSION_EXPIRY_SEC,
      receiveMaximum: RECEIVE_MAXIMUM,
      // As the bus connection does: a session the broker kept keeps its subscriptions (and a
      // reconnect of a big fleet's hub does not bring every retained status and hello again).
      resubscribeWithSession: false,
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

  /** Connects (once); rejects when the broker refuses, does not answer, or has no subscription identifiers. */
  start(): Promise<void> {
    this.started ??= this.subscriber.start().then(() => {
      if (!this.subscriber.subscriptionIdentifiers) throw new Error('the broker has no MQTT 5 subscription identifiers');
    });
    return this.started;
  }

  /**
   * Subscribed again for each new handler, as the bus does, so that it gets the retained messages
   * (the others recognise them as held). The last handler of a filter gone, the broker is told.
   */
  async subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>> {
    await this.start();
    const entry: SubscriptionEntry = { filter, handler, qos: 1 };
    this.handlers.add(entry);
    try {
      await this.subscriber.subscribe({ filter, id: this.ids.note(filter) });
    } catch (err) {
      this.remove(entry);
      throw err;
    }
    let removed = false;
    return () => {
      if (!removed) this.remove(entry);
      removed = true;
      return Promise.resolve();
    };
  }

  close(): Promise<void> {
    return this.subscriber.close();
  }

  private remove(entry: SubscriptionEntry): void {
    if (!this.handlers.remove(entry)) return;
    this.ids.forget(entry.filter);
    this.subscriber.unsubscribe(entry.filter);
  }

  private take(packet: IPublishPacket): Promise<void> {
    const { topic } = packet;
    const handlers = this.ids.handlersOf(topic, packet.properties?.subscriptionIdentifier);
    runHandlers(handlers, topic, packet.payload as Buffer, { retain: packet.retain }, this.failed);
    return TAKEN;
  }

  private readonly failed = (err: unknown, topic: string): void => {
    this.options.logger.error({ err, topic: topic.slice(0, 256) }, 'ingest: a device topic handler failed');
  };
}
