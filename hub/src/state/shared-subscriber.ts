import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { generate, parser as mqttParser, type IPublishPacket, type Packet } from 'mqtt-packet';
import type { Logger } from '../../../core/src/log/logger.js';

export interface SharedSubscriberOptions {
  /** mqtt://host:port or mqtts://host:port, credentials in the URL or the options. */
  url: string;
  clientId: string;
  username?: string;
  password?: string;
  sessionExpirySec: number;
  /** Messages the broker may have handed over and not seen acknowledged (MQTT 5 Receive Maximum). */
  receiveMaximum: number;
  keepaliveSec?: number;
  reconnectMs?: number;
  connectTimeoutMs?: number;
  logger: Logger;
  /** Each message; its acknowledgement is sent when the promise resolves (not when it rejects: the broker sends it again). */
  onMessage(packet: IPublishPacket): Promise<void>;
}

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
  private readonly subscriptions: SharedSubscription[] = [];
  private readonly pendingSubacks = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private nextPacketId = 1;
  private connected_ = false;
  private closed = false;
  private firstConnect: { resolve: () => void; reject: (err: Error) => void } | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private corked = false;
  private connacks = 0;
  /** Subscriptions made while disconnected: sent at the next CONNACK even when it finds a session. */
  private readonly unsent = new Set<SharedSubscription>();

  constructor(private readonly options: SharedSubscriberOptions) {}

  get connected(): boolean {
    return this.connected_;
  }

  /** Resolves at the broker's first CONNACK; rejects when it refuses, or nothing answers within the connect timeout. */
  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.firstConnect = undefined;
        reject(new Error(`no MQTT connection to the broker within ${this.timeoutMs} ms`));
        void this.close();
      }, this.timeoutMs);
      this.firstConnect = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.open();
    });
  }

  /** Subscribes now and after every reconnect that finds no session; resolves at the SUBACK. */
  subscribe(subscription: SharedSubscription): Promise<void> {
    this.subscriptions.push(subscription);
    return this.sendSubscribe(subscription);
  }

  /** Disconnects and keeps the session: what was not acknowledged stays with the broker. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pingTimer);
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      if (this.connected_) socket.end(generate({ cmd: 'disconnect', reasonCode: 0 }, { protocolVersion: 5 }));
      else socket.destroy();
      setTimeout(() => socket.destroy(), 1_000).unref();
    });
  }

  private get timeoutMs(): number {
    return this.options.connectTimeoutMs ?? 10_000;
  }

  private open(): void {
    const url = new URL(this.options.url);
    const port = Number(url.port || (url.protocol === 'mqtts:' ? 8883 : 1883));
    const socket = url.protocol === 'mqtts:' ? tlsConnect({ host: url.hostname, port, servername: url.hostname }) : netConnect({ host: url.hostname, port });
    socket.setNoDelay(true);
    this.socket = socket;
    const parser = mqttParser({ protocolVersion: 5 });
    parser.on('packet', (packet: Packet) => this.onPacket(socket, packet));
    parser.on('error', (err: Error) => {
      this.options.logger.warn({ err: err.message, clientId: this.options.clientId }, 'shared subscriber: malformed packet from the broker');
      socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
    socket.once(url.protocol === 'mqtts:' ? 'secureConnect' : 'connect', () => {
      const username = this.options.username ?? (url.username ? decodeURIComponent(url.username) : undefined);
      const password = this.options.password ?? (url.password ? decodeURIComponent(url.password) : undefined);
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
    switch (packet.cmd) {
      case 'connack': {
        if (packet.reasonCode) {
          const err = new Error(`the broker refused the connection (CONNACK reason ${packet.reasonCode})`);
          this.firstConnect?.reject(err);
          this.firstConnect = undefined;
          this.options.logger.warn({ clientId: this.options.clientId, reason: packet.reasonCode }, 'shared subscriber: connection refused');
          socket.destroy();
          return;
        }
        this.connected_ = true;
        this.startPings(socket);
        // Made again at every connection, not only when the broker answers without a session: mosquitto
        // 2.0 restored from its persistence says the session is there without its shared subscriptions.
        // Subscribing again is harmless (the subscription is replaced); the retained messages it brings
        // again are recognised downstream as the messages already held.
        if (this.connacks++ > 0) for (const s of this.subscriptions) void this.sendSubscribe(s).catch(() => undefined);
        else for (const s of this.unsent) void this.sendSubscribe(s).catch(() => undefined);
        this.unsent.clear();
        this.firstConnect?.resolve();
        this.firstConnect = undefined;
        return;
      }
      case 'publish': {
        const publish = packet;
        this.options.onMessage(publish).then(
          () => {
            // Only on the connection it came by: after a reconnect the broker sends it again under its id.
            if (publish.qos === 1 && socket === this.socket && !socket.destroyed) {
              // A batch written to the stream resolves its messages together: their acknowledgements leave in one write.
              this.corkUntilNextTurn(socket);
              socket.write(generate({ cmd: 'puback', messageId: publish.messageId, reasonCode: 0 }, { protocolVersion: 5 }));
            }
          },
          () => undefined,
        );
        return;
      }
      case 'suback': {
        const waiting = this.pendingSubacks.get(packet.messageId ?? -1);
        if (!waiting) return;
        this.pendingSubacks.delete(packet.messageId!);
        const refused = (packet.granted as number[]).find((code) => code >= 0x80);
        if (refused !== undefined) waiting.reject(new Error(`the broker refused the subscription (reason ${refused})`));
        else waiting.resolve();
        return;
      }
      case 'pingresp':
        this.awaitingPong = false;
        return;
      case 'disconnect':
        this.options.logger.warn({ clientId: this.options.clientId, reason: packet.reasonCode }, 'shared subscriber: the broker disconnected');
        socket.destroy();
        return;
      default:
        return;
    }
  }

  private sendSubscribe(s: SharedSubscription): Promise<void> {
    const socket = this.socket;
    if (!socket || !this.connected_) {
      this.unsent.add(s);
      return Promise.resolve();
    }
    const messageId = this.packetId();
    return new Promise<void>((resolve, reject) => {
      this.pendingSubacks.set(messageId, { resolve, reject });
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
    });
  }

  private packetId(): number {
    const id = this.nextPacketId;
    this.nextPacketId = id >= 0xffff ? 1 : id + 1;
    return id;
  }

  /** A PINGREQ at half the keepalive; no answer by the next one and the connection is given up for a new one. */
  private startPings(socket: Socket): void {
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
      (this.keepaliveSec * 1000) / 2,
    );
    this.pingTimer.unref();
  }

  private corkUntilNextTurn(socket: Socket): void {
    if (this.corked) return;
    this.corked = true;
    socket.cork();
    setImmediate(() => {
      this.corked = false;
      socket.uncork();
    });
  }

  private onClose(socket: Socket): void {
    if (socket !== this.socket) return;
    this.connected_ = false;
    clearInterval(this.pingTimer);
    for (const waiting of this.pendingSubacks.values()) waiting.reject(new Error('the connection closed before the SUBACK'));
    this.pendingSubacks.clear();
    if (this.closed) return;
    this.reconnectTimer = setTimeout(() => this.open(), this.options.reconnectMs ?? 500);
  }
}
