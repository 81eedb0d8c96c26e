import { connect as mqttConnect, type IClientOptions, type IConnackPacket, type IPublishPacket, type MqttClient } from 'mqtt';
import { LookoutError } from 'lookout/core';
import { Backoff } from './backoff.js';
import { coalesceAcks } from './coalesced-acks.js';
import { keepAliveWhileReceiving } from './keepalive-while-receiving.js';
import { silentBusLogger, urlForLog, type BusLogger } from './bus-logger.js';
import type { BusPort, MessageHandler, PublishOptions } from 'lookout/core/host';
import type { MqttBusOptions, MqttBusStats } from './mqtt-bus-options.js';
import { assertPublishTopic, assertTopicFilter } from './mqtt-topics.js';
import { SubscriptionTable, type Qos, type SubscriptionEntry } from './subscription-table.js';
import { IdentifiedFilters, runHandlers } from './identified-filters.js';
import { tlsFailureOf, type TlsFailure } from './tls-failure.js';

export type { MqttBusOptions, MqttBusStats, MqttTlsOptions, MqttWill } from './mqtt-bus-options.js';

interface Deferred {
  resolve: () => void;
  reject: (err: Error) => void;
}

const noLog = (): void => undefined;

/**
 * CONNACK codes that mean the credentials, not the network, are the problem: 3.1.1's bad user name or
 * password (4) and not authorized (5), MQTT 5's 0x86 and 0x87.
 */
const AUTH_REFUSALS = new Set([4, 5, 0x86, 0x87]);
/** CONNACK codes of a broker that does not speak the version offered: 3.1.1's 1, MQTT 5's 0x84. */
const VERSION_REFUSALS = new Set([1, 0x84]);
/** MQTT 5's "never expires": a persistent session lives as long as under 3.1.1 (the broker may cap it). */
const SESSION_NEVER_EXPIRES = 0xffffffff;
/** A SUBACK code at or above this refuses the filter (3.1.1's 0x80, MQTT 5's reason codes). */
const SUBACK_REFUSED = 0x80;

/**
 * BusPort over MQTT.js 5, speaking MQTT 5 (3.1.1 with a broker that speaks no 5). Under MQTT 5 every
 * filter is subscribed with its own Subscription Identifier, because brokers differ on a message
 * matching overlapping filters (aedes sends one copy, mosquitto one per filter): the identifiers a
 * copy carries say which handlers it is for (SubscriptionTable.handlersForCopy).
 *
 * Reconnecting is ours, not MQTT.js's: its fixed `reconnectPeriod` has no backoff, so it is set to 0
 * and `client.reconnect()` is called on our schedule, handing over the stores so that QoS 1
 * messages in flight survive. Subscriptions are kept in our own table and restored whenever the
 * broker answers without a session (a restarted broker without persistence).
 */
export class MqttBus implements BusPort {
  readonly clientId: string;
  private readonly options: MqttBusOptions;
  private readonly log: BusLogger;
  private readonly backoff: Backoff;
  private readonly defaultQos: Qos;
  private readonly table = new SubscriptionTable();
  /** Filters the broker acknowledged in the current session. */
  private readonly brokerFilters = new Set<string>();
  /** Filters dropped while offline that a resumed session may still hold. */
  private readonly staleFilters = new Set<string>();
  private readonly awaitingAck = new Map<SubscriptionEntry, Deferred>();
  private readonly pendingPublishes = new Set<Deferred>();
  private readonly connectListeners = new Set<() => void>();
  private client: MqttClient | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private generation = 0;
  private ready = false;
  private closed = false;
  private closing: Promise<void> | null = null;
  private quietErrors = false;
  /** Settles the promise of `start()`; null once it has. */
  private firstConnect: { resolve: () => void; refused: (code: number) => void; tlsFailed: (f: TlsFailure) => void; aborted: () => void } | null = null;
  /** The TLS failure last logged at error level: the same one again on each retry is logged at debug. */
  private loggedTlsFailure: string | null = null;
  /** Filters by their subscription identifier (ids derive from filters: see subscription-ids.ts). */
  private readonly ids = new IdentifiedFilters(this.table);
  /** False when an MQTT 5 broker says it has no subscription identifiers (copies are then matched by topic). */
  private idsAvailable = true;
  private readonly counters: MqttBusStats = {
    connects: 0,
    messagesIn: 0,
    published: 0,
    handlerErrors: 0,
    connectedSince: null,
    sessionPresent: false,
    protocolVersion: 5,
    tlsFailure: null,
  };

  private constructor(options: MqttBusOptions) {
    if (!options.url) throw new LookoutError('config_invalid', 'MqttBus needs a broker url', { details: { key: 'url' } });
    if (!options.clientId) throw new LookoutError('config_invalid', 'MqttBus needs a client id', { details: { key: 'clientId' } });
    assertBrokerUrl(options.url);
    if (options.tls && !TLS_PROTOCOLS.has(new URL(options.url).protocol)) {
      throw new LookoutError('config_invalid', `TLS settings (a CA, a client certificate) need an mqtts:// url, not ${urlForLog(options.url)}`, {
        details: { key: 'url' },
      });
    }
    if (options.will) assertPublishTopic(options.will.topic);
    this.options = options;
    this.clientId = options.clientId;
    this.log = options.logger ?? silentBusLogger;
    this.backoff = new Backoff(options.reconnect);
    this.defaultQos = options.defaultQos ?? 1;
    this.counters.protocolVersion = options.protocolVersion ?? 5;
  }

  /** Connects and resolves once the broker accepted the client (subscriptions restored, listeners run). */
  static async connect(options: MqttBusOptions): Promise<MqttBus> {
    const bus = new MqttBus(options);
    await bus.start();
    return bus;
  }

  /**
   * A bus that is not connected yet. Subscribing before `start()` means a persistent session's queued
   * messages, which the broker sends right after CONNACK, already find their handlers.
   */
  static create(options: MqttBusOptions): MqttBus {
    return new MqttBus(options);
  }

  get connected(): boolean {
    return !this.closed && this.client?.connected === true;
  }

  stats(): MqttBusStats {
    return { ...this.counters };
  }

  start(): Promise<void> {
    if (this.client) throw new LookoutError('internal', 'MqttBus.start() called twice');
    if (this.closed) return Promise.reject(closedError());
    const o = this.options;
    const timeoutMs = o.connectTimeoutMs ?? 10_000;
    if (!(timeoutMs > 0))
      throw new LookoutError('config_invalid', `connectTimeoutMs must be positive (Infinity: for ever), got ${timeoutMs}`, {
        details: { key: 'connectTimeoutMs' },
      });
    const clientOptions: IClientOptions = {
      clientId: o.clientId,
      protocolVersion: this.counters.protocolVersion,
      clean: o.clean ?? false,
      keepalive: o.keepaliveSec ?? 30,
      reconnectPeriod: 0,
      connectTimeout: o.attemptTimeoutMs ?? Math.min(timeoutMs, 10_000),
      resubscribe: false,
      // MQTT.js's debug logging, off or not, costs two calls per packet: about 5 % of a busy hub's ingest.
      log: noLog,
    };
    // Under MQTT 5 a session ends at disconnect unless it is given a lifetime; 3.1.1 kept it for ever.
    if (clientOptions.protocolVersion === 5 && !clientOptions.clean) clientOptions.properties = { sessionExpiryInterval: SESSION_NEVER_EXPIRES };
    if (o.username !== undefined) clientOptions.username = o.username;
    if (o.password !== undefined) clientOptions.password = o.password;
    if (o.tls) {
      // Always verified: a broker whose certificate does not chain to the CA is not the fleet's.
      clientOptions.rejectUnauthorized = true;
      if (o.tls.ca !== undefined) clientOptions.ca = o.tls.ca;
      if (o.tls.cert !== undefined) clientOptions.cert = o.tls.cert;
      if (o.tls.key !== undefined) clientOptions.key = o.tls.key;
      if (o.tls.servername !== undefined) clientOptions.servername = o.tls.servername;
    }
    if (o.will) {
      const payload = typeof o.will.payload === 'string' ? Buffer.from(o.will.payload) : o.will.payload;
      clientOptions.will = { topic: o.will.topic, payload, qos: o.will.qos ?? 1, retain: o.will.retain ?? false };
    }
    this.log.info({ url: urlForLog(o.url), clientId: o.clientId, clean: clientOptions.clean }, 'bus connecting');

    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (err: LookoutError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.firstConnect = null;
        void this.close().finally(() => reject(err));
      };
      // Infinity: keep trying for ever (a camera boots before its network and hub do).
      const forever = timeoutMs === Infinity;
      const timer = forever
        ? undefined
        : setTimeout(
            () =>
              fail(
                new LookoutError('bus_unreachable', `no connection to ${urlForLog(o.url)} within ${timeoutMs} ms`, {
                  details: { url: urlForLog(o.url), timeoutMs },
                }),
              ),
            timeoutMs,
          );
      this.firstConnect = {
        resolve: () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.firstConnect = null;
          resolve();
        },
        // Trying for ever, a refusal is logged and tried again: the broker may learn the credentials later.
        refused: (code: number) => {
          if (forever) return;
          fail(
            new LookoutError('bus_auth_refused', `the broker at ${urlForLog(o.url)} refused the connection (CONNACK ${code})`, {
              details: { returnCode: code },
            }),
          );
        },
        // A certificate that does not verify will not start verifying on the next try: fail now, with why.
        tlsFailed: (f: TlsFailure) => {
          if (forever) return;
          fail(
            new LookoutError('bus_unreachable', `TLS with ${urlForLog(o.url)} failed: ${f.message} (${f.code})`, {
              details: { url: urlForLog(o.url), reason: 'tls', tls_code: f.code },
            }),
          );
        },
        aborted: () => fail(closedError()),
      };
      let client: MqttClient;
      try {
        client = mqttConnect(o.url, clientOptions);
      } catch (err) {
        clearTimeout(timer);
        settled = true;
        this.firstConnect = null;
        reject(new LookoutError('bus_unreachable', `cannot connect to ${urlForLog(o.url)}: ${(err as Error).message}`, { cause: err }));
        return;
      }
      this.client = client;
      coalesceAcks(client);
      keepAliveWhileReceiving(client);
      client.on('connect', (connack) => void this.onBrokerConnect(connack));
      client.on('close', () => this.onBrokerClose());
      client.on('error', (err) => this.onClientError(err));
      client.on('message', (topic, payload, packet) => this.dispatch(topic, payload, packet));
    });
  }

  async publish(topic: string, payload: Buffer | string, options: PublishOptions = {}): Promise<void> {
    if (this.closed) throw closedError();
    if (!this.client) throw new LookoutError('bus_closed', 'the bus is not started (call start() first)');
    assertPublishTopic(topic);
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) {
      throw new LookoutError('argument_invalid', `a payload must be a string or a Buffer (topic ${topic})`);
    }
    const client = this.client;
    const qos = options.qos ?? this.defaultQos;
    await new Promise<void>((resolve, reject) => {
      const d: Deferred = { resolve, reject };
      this.pendingPublishes.add(d);
      // Offline, MQTT.js queues the message and sends it after the reconnect; the promise waits for that.
      client.publish(topic, payload, { qos, retain: options.retain ?? false }, (err) => {
        if (!this.pendingPublishes.delete(d)) return;
        if (err) reject(new LookoutError('bus_publish_failed', `publish to ${topic} failed: ${err.message}`, { cause: err, details: { topic } }));
        else {
          this.counters.published++;
          resolve();
        }
      });
    });
  }

  async subscribe(filter: string, handler: MessageHandler, options: { qos?: Qos } = {}): Promise<() => Promise<void>> {
    if (this.closed) throw closedError();
    assertTopicFilter(filter);
    if (typeof handler !== 'function') throw new LookoutError('argument_invalid', 'subscribe needs a handler function');
    const entry: SubscriptionEntry = { filter, handler, qos: options.qos ?? this.defaultQos };
    const acked = new Promise<void>((resolve, reject) => this.awaitingAck.set(entry, { resolve, reject }));
    this.table.add(entry);
    this.staleFilters.delete(filter);
    // Sent even when the filter is already held, so that the new handler gets the retained messages.
    // Offline (or not started), the restore after the next CONNACK sends it.
    if (this.connected) void this.sendSubscribe([filter], this.generation);
    await acked;
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      this.awaitingAck.delete(entry);
      if (!this.table.remove(entry)) return;
      await this.dropFilter(filter);
    };
  }

  /**
   * Ends the broker's delivery of `filter` to this session when no handler here holds it: a
   * persistent session keeps what an earlier run subscribed (the hub's device topics, taken on a
   * session of their own since), and would go on receiving each such message only to drop it.
   */
  async unsubscribeUnheld(filter: string): Promise<void> {
    if (this.closed || this.table.hasFilter(filter)) return;
    if (this.connected) await this.sendUnsubscribe(filter);
  }

  onConnect(listener: () => void): () => void {
    this.connectListeners.add(listener);
    // Same contract as MemoryBus: a listener added while connected runs once right away.
    if (this.ready && this.connected) queueMicrotask(() => this.runListener(listener));
    return () => this.connectListeners.delete(listener);
  }

  /** Ends the session with a DISCONNECT (so the broker discards the will); pending calls reject with `bus_closed`. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    this.ready = false;
    this.counters.connectedSince = null;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    for (const d of this.pendingPublishes) d.reject(closedError());
    this.pendingPublishes.clear();
    for (const d of this.awaitingAck.values()) d.reject(closedError());
    this.awaitingAck.clear();
    this.table.clear();
    this.connectListeners.clear();
    this.closing = this.endClient();
    this.firstConnect?.aborted(); // a start() still trying settles now, not at its timeout
    return this.closing;
  }

  private async endClient(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const timeoutMs = this.options.closeTimeoutMs ?? 2_000;
    const graceful = client.connected;
    let timer: NodeJS.Timeout | undefined;
    const ended = new Promise<void>((resolve) => client.end(!graceful, () => resolve()));
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const outcome = await Promise.race([ended, timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      // A broker that stopped answering: drop the socket (it may then send the will, which is true).
      this.log.warn({ clientId: this.clientId }, 'bus close timed out, dropping the connection');
      client.stream?.destroy();
    }
    this.log.info({ clientId: this.clientId }, 'bus closed');
  }

  private async onBrokerConnect(connack: IConnackPacket): Promise<void> {
    if (this.closed) return;
    const generation = ++this.generation;
    this.backoff.reset();
    this.quietErrors = false;
    this.counters.tlsFailure = null;
    this.loggedTlsFailure = null;
    this.counters.connects++;
    this.counters.connectedSince = Date.now();
    const sessionPresent = !(this.options.clean ?? false) && connack.sessionPresent === true;
    this.counters.sessionPresent = sessionPresent;
    this.idsAvailable = this.counters.protocolVersion === 5 && connack.properties?.subscriptionIdentifiersAvailable !== false;
    if (!sessionPresent) {
      this.brokerFilters.clear();
      this.staleFilters.clear();
    }
    this.log.info({ clientId: this.clientId, sessionPresent, connects: this.counters.connects }, 'bus connected');

    for (const filter of [...this.staleFilters]) await this.sendUnsubscribe(filter);
    this.staleFilters.clear();
    // A filter the resumed session holds is sent again when a handler still waits on it: its SUBACK
    // was lost with the last connection, and nothing else would acknowledge that handler.
    const waiting = new Set([...this.awaitingAck.keys()].map((e) => e.filter));
    const missing = [...this.table.filters().keys()].filter((f) => !this.brokerFilters.has(f) || waiting.has(f));
    if (missing.length > 0) await this.sendSubscribe(missing, generation);
    if (generation !== this.generation || !this.connected) return; // lost again meanwhile: the next connect redoes this

    this.ready = true;
    this.firstConnect?.resolve();
    for (const listener of [...this.connectListeners]) this.runListener(listener);
  }

  /**
   * Subscribes the filters and acknowledges every handler waiting on them: in one SUBSCRIBE, or under
   * MQTT 5 one per filter (a Subscription Identifier names a whole SUBSCRIBE).
   */
  private async sendSubscribe(filters: string[], generation: number): Promise<void> {
    if (this.idsAvailable) await Promise.all(filters.map((f) => this.subscribeOnce([f], generation, this.ids.note(f))));
    else await this.subscribeOnce(filters, generation);
  }

  private async subscribeOnce(filters: string[], generation: number, id?: number): Promise<void> {
    const client = this.client;
    if (!client) return;
    const request: Record<string, { qos: Qos }> = {};
    for (const f of filters) request[f] = { qos: this.table.qosOf(f) };
    let granted: { topic: string; qos: number }[];
    try {
      granted = await client.subscribeAsync(request, id === undefined ? {} : { properties: { subscriptionIdentifier: id } });
    } catch (err) {
      // Connection lost before SUBACK: the handlers stay registered and the next connect retries.
      if (generation === this.generation && !this.closed) this.log.debug({ err, filters }, 'subscribe interrupted');
      return;
    }
    for (const g of granted) {
      if (g.qos >= SUBACK_REFUSED) this.refuseFilter(g.topic);
      else {
        this.brokerFilters.add(g.topic);
        this.ackFilter(g.topic);
      }
    }
  }

  private ackFilter(filter: string): void {
    for (const [entry, d] of this.awaitingAck) {
      if (entry.filter !== filter) continue;
      this.awaitingAck.delete(entry);
      d.resolve();
    }
  }

  private refuseFilter(filter: string): void {
    this.log.error({ clientId: this.clientId, filter }, 'broker refused a subscription');
    for (const [entry, d] of this.awaitingAck) {
      if (entry.filter !== filter) continue;
      this.awaitingAck.delete(entry);
      this.table.remove(entry);
      d.reject(new LookoutError('bus_subscribe_refused', `the broker refused the subscription to ${filter}`, { details: { filter } }));
    }
  }

  private async dropFilter(filter: string): Promise<void> {
    const held = this.brokerFilters.delete(filter);
    this.ids.forget(filter);
    if (this.closed) return;
    if (this.connected) await this.sendUnsubscribe(filter);
    else if (held) this.staleFilters.add(filter);
  }

  private async sendUnsubscribe(filter: string): Promise<void> {
    try {
      await this.client?.unsubscribeAsync(filter);
    } catch (err) {
      this.log.debug({ err, filter }, 'unsubscribe interrupted');
    }
  }

  private onBrokerClose(): void {
    if (this.closed) return;
    if (this.ready) this.log.warn({ clientId: this.clientId }, 'bus connection lost, reconnecting');
    this.ready = false;
    this.counters.connectedSince = null;
    if (this.reconnectTimer) return;
    const delay = this.backoff.next();
    this.log.debug({ clientId: this.clientId, delayMs: delay }, 'bus reconnect scheduled');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      const client = this.client;
      if (this.closed || !client || client.connected) return;
      // Handing the stores back keeps unacknowledged QoS 1 publishes for the next session.
      client.reconnect({ incomingStore: client.incomingStore, outgoingStore: client.outgoingStore });
    }, delay);
  }

  private onClientError(err: Error & { code?: unknown }): void {
    if (this.closed) return;
    if (typeof err.code === 'number' && VERSION_REFUSALS.has(err.code) && this.counters.protocolVersion === 5 && this.client) {
      // An MQTT 3.1.1 broker (aedes 1, mosquitto 1.x): the next attempt, scheduled on close, offers 3.1.1.
      this.log.info({ clientId: this.clientId }, 'the broker speaks MQTT 3.1.1 only: speaking 3.1.1 to it');
      this.counters.protocolVersion = 4;
      this.idsAvailable = false;
      this.client.options.protocolVersion = 4;
      delete this.client.options.properties;
      return;
    }
    if (typeof err.code === 'number' && AUTH_REFUSALS.has(err.code)) {
      this.log.error({ clientId: this.clientId, returnCode: err.code }, 'broker refused the credentials');
      this.firstConnect?.refused(err.code);
      return;
    }
    const tls = tlsFailureOf(err);
    if (tls) {
      this.counters.tlsFailure = tls;
      // Retried with backoff (a renewed certificate may be installed), logged as an error once per cause.
      const details = { clientId: this.clientId, url: urlForLog(this.options.url), reason: 'tls', tls_code: tls.code, err: tls.message };
      if (this.loggedTlsFailure === tls.code) this.log.debug(details, 'bus TLS handshake failed again');
      else this.log.error(details, 'bus TLS handshake failed: the broker’s certificate (or ours) is not of the expected CA, or names another host');
      this.loggedTlsFailure = tls.code;
      this.firstConnect?.tlsFailed(tls);
      return;
    }
    // Refused connections repeat on every attempt during an outage: one warning, then debug.
    if (this.quietErrors) this.log.debug({ clientId: this.clientId, err: err.message }, 'bus error');
    else this.log.warn({ clientId: this.clientId, err: err.message }, 'bus error');
    this.quietErrors = true;
  }

  private dispatch(topic: string, payload: Buffer, packet: IPublishPacket): void {
    if (this.closed) return;
    this.counters.messagesIn++;
    const meta = { retain: packet.retain === true };
    const handlers = this.idsAvailable ? this.ids.handlersOf(topic, packet.properties?.subscriptionIdentifier) : this.table.handlersFor(topic);
    runHandlers(handlers, topic, payload, meta, this.handlerFailed);
  }

  private readonly handlerFailed = (err: unknown, topic: string): void => {
    this.counters.handlerErrors++;
    this.log.error({ err, topic }, 'bus message handler failed');
  };

  private runListener(listener: () => void): void {
    if (this.closed || !this.connectListeners.has(listener)) return;
    try {
      const result: unknown = listener();
      if (result instanceof Promise) result.catch((err: unknown) => this.log.error({ err }, 'bus onConnect listener failed'));
    } catch (err) {
      this.log.error({ err }, 'bus onConnect listener failed');
    }
  }
}

const URL_PROTOCOLS = new Set(['mqtt:', 'mqtts:', 'tcp:', 'ssl:', 'tls:', 'ws:', 'wss:']);
const TLS_PROTOCOLS = new Set(['mqtts:', 'ssl:', 'tls:', 'wss:']);

/** MQTT.js would retry an unusable URL until the timeout; a typo in `--mqtt` should fail at once. */
function assertBrokerUrl(url: string): void {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || !URL_PROTOCOLS.has(parsed.protocol) || !parsed.hostname) {
    throw new LookoutError('config_invalid', `not a broker url (mqtt://host:port): ${urlForLog(url)}`, {
      details: { key: 'url', valid: [...URL_PROTOCOLS].map((p) => `${p}//host:port`) },
    });
  }
}

function closedError(): LookoutError {
  return new LookoutError('bus_closed');
}
