import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { generate, parser as mqttParser, type IPublishPacket, type Packet } from 'mqtt-packet';
import { PubackBatch } from './coalesced-acks.js';
import { LookoutError, type Logger } from 'lookout/core';

const TLS_SCHEMES = new Set(['mqtts:', 'ssl:', 'tls:']);
const TCP_SCHEMES = new Set(['mqtt:', 'tcp:']);
/** MQTT 5 DISCONNECT reason: the server sent more messages than our Receive Maximum. */
const RECEIVE_MAXIMUM_EXCEEDED = 0x93;
/**
 * QoS 1 messages in hand on one connection before the broker is disconnected for sending too many:
 * the packet id space (a broker cannot have more unacknowledged without reusing an id). Not the
 * Receive Maximum: mosquitto 2.0.11 holds to it for what it has queued, then refills past it as
 * acknowledgements come (measured: 574 in hand with a Receive Maximum and max_inflight_messages of
 * 50, acknowledgements within 20 ms; 1 001 of 1 000 at 1 000 devices × 20 msg/s), and disconnecting
 * for that made a replica reconnect in a loop under load and fail its start on a big fleet.
 */
export const DEFAULT_MAX_IN_HAND = 65_535;

export interface SharedSubscriberOptions {
  /** mqtt://host:port or mqtts://host:port, credentials in the URL or the options. */
  url: string;
  clientId: string;
  username?: string;
  password?: string;
  sessionExpirySec: number;
  /** Messages the broker may have handed over and not seen acknowledged (MQTT 5 Receive Maximum). */
  receiveMaximum: number;
  /** Past this many QoS 1 messages in hand the broker is disconnected (0x93). Default DEFAULT_MAX_IN_HAND. */
  maxInHand?: number;
  keepaliveSec?: number;
  /** Wait before connecting again after a lost connection; null: never again (a session taken over once, then ended). */
  reconnectMs?: number | null;
  /** Each CONNACK that accepted the connection, with whether the broker had a session for this client id. */
  onConnect?(sessionPresent: boolean): void;
  /**
   * Subscribe again at a connection whose session the broker kept (default true: mosquitto 2.0
   * restored from its persistence says the session is there without its shared subscriptions). A
   * subscription whose SUBACK had not come is sent again either way.
   */
  resubscribeWithSession?: boolean;
  /**
   * Published by the broker (QoS 1, at once) when this connection ends without a DISCONNECT: a
   * process that died, so that others may take over its session without waiting for a timeout.
   * Asked for at each connection, so that its payload can tell one connection from the next.
   */
  will?(): { topic: string; payload: string };
  /** The connection closed and, with reconnectMs null or after close(), is not opened again. */
  onEnd?(): void;
  connectTimeoutMs?: number;
  /** With mqtts://: the CAs the broker's certificate must chain to (default Node's). */
  ca?: string[];
  logger: Logger;
  /** Each message; its acknowledgement is sent when the promise resolves (not when it rejects: the broker sends it again). */
  onMessage(packet: IPublishPacket): Promise<void>;
}

/** Who waits for a SUBACK. */
type Waiter = { resolve: () => void; reject: (err: Error) => void };

export interface SharedSubscription {
  filter: string;
  /** MQTT 5 subscription identifier, given back with each message it matched. */
  id: number;
  /** Retain handling (0: retained messages at subscribe). */
  rh?: 0 | 1 | 2;
}

/**
 * A subscribing MQTT 5 client that acknowledges each QoS 1 message when its handler has finished
 * with it, whatever the order, so that up to Receive Maximum messages are worked on at once. The
 * hub's replicas acknowledge a message only once it is in the shared Redis stream: with MQTT.js,
 * which hands one message at a time and sends the next only after the previous acknowledgement,
 * a connection took one message per Redis round trip, and four connections could not take the
 * load one hub takes (1 000 devices × 20 msg/s). The wire format is mqtt-packet's, the library
 * MQTT.js itself uses; what is ours is the session: connect, subscribe, keepalive, acknowledge,
 * reconnect. The session is persistent: what was not acknowledged before a reconnect, or before
 * this process died, the broker sends again.
 */
export class SharedSubscriber {
  private socket: Socket | undefined;
  private readonly acks = new PubackBatch();
  /** What is subscribed, by filter (one subscription a filter). */
  private readonly subscriptions = new Map<string, SharedSubscription>();
  /** The subscription each SUBSCRIBE in flight on this connection was for, by packet id. */
  private readonly pendingSubacks = new Map<number, SharedSubscription>();
  /** Subscriptions whose SUBACK has not come, with who waits for it: across a reconnect, until it comes or close(). */
  private readonly waiting = new Map<SharedSubscription, Waiter[]>();
  private identifiersAvailable = true;
  private nextPacketId = 1;
  private connected_ = false;
  private closed = false;
  private firstConnect: { resolve: () => void; reject: (err: Error) => void } | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private connacks = 0;
  private readonly url: URL;
  private readonly credentials: { username?: string; password?: string };
  private attemptTimer: NodeJS.Timeout | undefined;
  private startTimer: NodeJS.Timeout | undefined;
  /** QoS 1 messages of the current connection handed to the handler and not acknowledged yet. */
  private inHand = 0;
  /** Whether this connection's overrun of the Receive Maximum was logged (once per connection). */
  private overrunLogged = false;

  constructor(private readonly options: SharedSubscriberOptions) {
    this.url = new URL(options.url);
    // Any other scheme (ws://, wss://) would be spoken here as plain TCP, its password in clear.
    if (!TLS_SCHEMES.has(this.url.protocol) && !TCP_SCHEMES.has(this.url.protocol)) {
      throw new LookoutError('config_invalid', `the hub's ingest session speaks MQTT over TCP or TLS (mqtt://, mqtts://), not ${this.url.protocol}//`, {
        details: { scheme: this.url.protocol },
      });
    }
    try {
      const username = options.username ?? (this.url.username ? decodeURIComponent(this.url.username) : undefined);
      const password = options.password ?? (this.url.password ? decodeURIComponent(this.url.password) : undefined);
      this.credentials = { ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}) };
    } catch {
      throw new LookoutError('config_invalid', 'the broker URL has a malformed %-escape in its credentials');
    }
  }

  get connected(): boolean {
    return this.connected_;
  }

  /** Resolves at the broker's first CONNACK; rejects when it refuses, or nothing answers within the connect timeout. */
  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.startTimer = setTimeout(() => this.firstConnect?.reject(new Error(`no MQTT connection to the broker within ${this.timeoutMs} ms`)), this.timeoutMs);
      this.firstConnect = {
        resolve: () => {
          clearTimeout(this.startTimer);
          this.firstConnect = undefined;
          resolve();
        },
        reject: (err) => {
          clearTimeout(this.startTimer);
          this.firstConnect = undefined;
          reject(err);
          // A start that failed leaves nothing behind: no reconnecting client, no timer.
          void this.close();
        },
      };
      this.open();
    });
  }

  /** False when the last CONNACK said the broker has no subscription identifiers (MQTT 5 lets it say so). */
  get subscriptionIdentifiers(): boolean {
    return this.identifiersAvailable;
  }

  /**
   * Subscribes now and after every reconnect that finds no session; resolves at the SUBACK, which
   * a lost connection only delays (the subscription is sent again on the next one). A filter
   * subscribed again (to have its retained messages again) replaces the one held.
   */
  subscribe(subscription: SharedSubscription): Promise<void> {
    // Who waited for the one it replaces waits for this one's SUBACK.
    const waiters = this.forget(subscription.filter) ?? [];
    this.subscriptions.set(subscription.filter, subscription);
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(subscription, [...waiters, { resolve, reject }]);
      if (this.connected_) this.sendSubscribe(subscription);
    });
  }

  /**
   * Ends the subscription to `filter`, this client's or one the session held before it connected:
   * the broker is told when connected, and it is not made again.
   */
  unsubscribe(filter: string): void {
    const waiters = this.forget(filter) ?? [];
    for (const w of waiters) w.reject(new Error(`the subscription to ${filter} was ended before its SUBACK`));
    // Told even when not made by this client: a session taken over holds its former client's subscriptions.
    if (this.connected_ && this.socket) {
      this.socket.write(generate({ cmd: 'unsubscribe', messageId: this.packetId(), unsubscriptions: [filter] }, { protocolVersion: 5 }));
    }
  }

  private rejectWaiters(why: string): void {
    for (const waiters of this.waiting.values()) for (const w of waiters) w.reject(new Error(why));
    this.waiting.clear();
  }

  /** Drops the subscription to `filter` held here; undefined when there was none, else who still waited for its SUBACK. */
  private forget(filter: string): Waiter[] | undefined {
    const old = this.subscriptions.get(filter);
    if (!old) return undefined;
    this.subscriptions.delete(filter);
    const waiters = this.waiting.get(old) ?? [];
    this.waiting.delete(old);
    return waiters;
  }

  /**
   * Disconnects and keeps the session: what was not acknowledged stays with the broker. With
   * endSession, the session ends with the connection (session expiry 0): the broker forgets it and
   * stops routing messages to it.
   */
  async close(options: { endSession?: boolean } = {}): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.attemptTimer);
    clearInterval(this.pingTimer);
    this.firstConnect?.reject(new Error('closed before the broker accepted the connection'));
    this.rejectWaiters('closed before the SUBACK');
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      const disconnect = options.endSession
        ? { cmd: 'disconnect' as const, reasonCode: 0, properties: { sessionExpiryInterval: 0 } }
        : { cmd: 'disconnect' as const, reasonCode: 0 };
      if (this.connected_) {
        // The acknowledgements gathered this turn go first: those messages are taken, not to be sent again.
        this.acks.flush();
        socket.end(generate(disconnect, { protocolVersion: 5 }));
      } else socket.destroy();
      setTimeout(() => socket.destroy(), 1_000).unref();
    });
  }

  private get timeoutMs(): number {
    return this.options.connectTimeoutMs ?? 10_000;
  }

  private open(): void {
    const url = this.url;
    const tls = TLS_SCHEMES.has(url.protocol);
    const port = Number(url.port || (tls ? 8883 : 1883));
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const trust = this.options.ca ? { ca: this.options.ca } : {};
    const socket = tls ? tlsConnect({ host, port, ...trust, ...(isIP(host) ? {} : { servername: host }) }) : netConnect({ host, port });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 10_000);
    this.socket = socket;
    this.inHand = 0;
    this.overrunLogged = false;
    // Every attempt, not only the first, gives up on a broker that takes the connection and never answers it.
    clearTimeout(this.attemptTimer);
    this.attemptTimer = setTimeout(() => {
      this.options.logger.warn({ clientId: this.options.clientId }, 'shared subscriber: no CONNACK in time; connecting again');
      socket.destroy();
    }, this.timeoutMs);
    this.attemptTimer.unref();
    const parser = mqttParser({ protocolVersion: 5 });
    parser.on('packet', (packet: Packet) => this.onPacket(socket, packet));
    parser.on('error', (err: Error) => {
      this.options.logger.warn({ err: err.message, clientId: this.options.clientId }, 'shared subscriber: malformed packet from the broker');
      socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      const { username, password } = this.credentials;
      const will = this.options.will?.();
      socket.write(
        generate(
          {
            cmd: 'connect',
            protocolVersion: 5,
            clientId: this.options.clientId,
            clean: false,
            keepalive: this.keepaliveSec,
            ...(username !== undefined ? { username } : {}),
            ...(password !== undefined ? { password: Buffer.from(password) } : {}),
            properties: { sessionExpiryInterval: this.options.sessionExpirySec, receiveMaximum: this.options.receiveMaximum },
            ...(will
              ? {
                  will: {
                    topic: will.topic,
                    payload: Buffer.from(will.payload),
                    qos: 1 as const,
                    retain: false,
                    properties: { willDelayInterval: 0 },
                  },
                }
              : {}),
          },
          { protocolVersion: 5 },
        ),
      );
    });
    socket.on('error', (err: Error) => this.options.logger.warn({ err: err.message, clientId: this.options.clientId }, 'shared subscriber: connection error'));
    socket.once('close', () => this.onClose(socket));
  }

  private get keepaliveSec(): number {
    return this.options.keepaliveSec ?? 30;
  }

  private onPacket(socket: Socket, packet: Packet): void {
    // Any packet shows the broker alive: a PINGRESP queued behind a backlog of PUBLISH packets
    // being worked through must not end the connection (keepalive-while-receiving.ts).
    this.awaitingPong = false;
    switch (packet.cmd) {
      case 'connack': {
        clearTimeout(this.attemptTimer);
        if (packet.reasonCode) {
          const err = new Error(`the broker refused the connection (CONNACK reason ${packet.reasonCode})`);
          this.firstConnect?.reject(err);
          this.firstConnect = undefined;
          this.options.logger.warn({ clientId: this.options.clientId, reason: packet.reasonCode }, 'shared subscriber: connection refused');
          socket.destroy();
          return;
        }
        this.connected_ = true;
        this.identifiersAvailable = packet.properties?.subscriptionIdentifiersAvailable !== false;
        this.options.onConnect?.(packet.sessionPresent);
        // The broker may set a shorter keepalive than asked for (MQTT 5 Server Keep Alive).
        this.startPings(socket, packet.properties?.serverKeepAlive ?? this.keepaliveSec);
        // Subscribing again is harmless (the subscription is replaced); the retained messages it
        // brings again are recognised downstream as the messages already held.
        const again = this.connacks++ > 0 && (!packet.sessionPresent || this.options.resubscribeWithSession !== false);
        for (const sub of this.subscriptions.values()) if (again || this.waiting.has(sub)) this.sendSubscribe(sub);
        this.firstConnect?.resolve();
        this.firstConnect = undefined;
        return;
      }
      case 'publish': {
        const publish = packet;
        // The rest of a read already parsed when the connection was given up for sending too many.
        if (socket.destroyed) return;
        if (publish.qos === 1 && ++this.inHand > this.options.receiveMaximum && !this.overrunLogged) {
          this.overrunLogged = true;
          this.options.logger.info(
            { clientId: this.options.clientId, receiveMaximum: this.options.receiveMaximum },
            'shared subscriber: the broker sends past our Receive Maximum (mosquitto 2.0 does); taken up to the packet id space',
          );
        }
        if (publish.qos === 1 && this.inHand > (this.options.maxInHand ?? DEFAULT_MAX_IN_HAND)) {
          // A broker past that would have this process hold without bound (MQTT 5: disconnect with 0x93).
          this.options.logger.warn({ clientId: this.options.clientId }, 'shared subscriber: the broker sent more than our Receive Maximum');
          socket.end(generate({ cmd: 'disconnect', reasonCode: RECEIVE_MAXIMUM_EXCEEDED }, { protocolVersion: 5 }));
          socket.destroy();
          return;
        }
        const settled = (): void => {
          if (publish.qos === 1 && socket === this.socket) this.inHand--;
        };
        this.options.onMessage(publish).then(
          () => {
            settled();
            // Only on the connection it came by: after a reconnect the broker sends it again under its id.
            if (publish.qos === 1 && socket === this.socket && !socket.destroyed && !socket.writableEnded) {
              // A batch written to the stream resolves its messages together: their acknowledgements leave in one write.
              this.acks.add(socket, publish.messageId!);
            }
          },
          (err: unknown) => {
            // Not acknowledged: the broker sends it again on the next connection; meanwhile it holds a slot.
            settled();
            this.options.logger.warn({ err: (err as Error).message, clientId: this.options.clientId }, 'shared subscriber: a message was not taken');
          },
        );
        return;
      }
      case 'suback': {
        const sub = this.pendingSubacks.get(packet.messageId ?? -1);
        if (!sub) return;
        this.pendingSubacks.delete(packet.messageId!);
        const waiters = this.waiting.get(sub) ?? [];
        this.waiting.delete(sub);
        const refused = (packet.granted as number[]).find((code) => code >= 0x80);
        if (refused === undefined) {
          for (const w of waiters) w.resolve();
          return;
        }
        // Refused: not made again at the next connection.
        const err = new Error(`the broker refused the subscription to ${sub.filter} (reason ${refused})`);
        if (this.subscriptions.get(sub.filter) === sub) this.subscriptions.delete(sub.filter);
        if (waiters.length === 0)
          this.options.logger.warn({ err: err.message, clientId: this.options.clientId }, 'shared subscriber: subscribing again failed');
        for (const w of waiters) w.reject(err);
        return;
      }
      case 'pingresp':
        return; // awaitingPong is cleared above, as by any packet
      case 'disconnect':
        this.options.logger.warn({ clientId: this.options.clientId, reason: packet.reasonCode }, 'shared subscriber: the broker disconnected');
        socket.destroy();
        return;
      default:
        return;
    }
  }

  private sendSubscribe(s: SharedSubscription): void {
    const socket = this.socket;
    if (!socket) return;
    const messageId = this.packetId();
    this.pendingSubacks.set(messageId, s);
    socket.write(
      generate(
        {
          cmd: 'subscribe',
          messageId,
          subscriptions: [{ topic: s.filter, qos: 1, ...(s.rh !== undefined ? { rh: s.rh } : {}) }],
          properties: { subscriptionIdentifier: s.id },
        },
        { protocolVersion: 5 },
      ),
    );
  }

  private packetId(): number {
    const id = this.nextPacketId;
    this.nextPacketId = id >= 0xffff ? 1 : id + 1;
    return id;
  }

  /** A PINGREQ at half the keepalive; nothing received by the next one and the connection is given up for a new one. */
  private startPings(socket: Socket, keepaliveSec: number): void {
    clearInterval(this.pingTimer);
    this.awaitingPong = false;
    this.pingTimer = setInterval(
      () => {
        if (this.awaitingPong) {
          this.options.logger.warn({ clientId: this.options.clientId }, 'shared subscriber: the broker stopped answering pings');
          socket.destroy();
          return;
        }
        this.awaitingPong = true;
        socket.write(generate({ cmd: 'pingreq' }, { protocolVersion: 5 }));
      },
      (Math.max(1, keepaliveSec) * 1000) / 2,
    );
    this.pingTimer.unref();
  }

  private onClose(socket: Socket): void {
    if (socket !== this.socket) return;
    this.connected_ = false;
    clearInterval(this.pingTimer);
    clearTimeout(this.attemptTimer);
    // Their waiters wait on: what they subscribed is sent again at the next CONNACK.
    this.pendingSubacks.clear();
    if (this.closed || this.options.reconnectMs === null) {
      this.closed = true;
      this.rejectWaiters('the connection ended before the SUBACK');
      this.options.onEnd?.();
      return;
    }
    this.reconnectTimer = setTimeout(() => this.open(), this.options.reconnectMs ?? 500);
  }
}
