import type { BackoffOptions } from './backoff.js';
import type { BusLogger } from './bus-logger.js';
import type { Qos } from './subscription-table.js';

/** Published by the broker when the connection drops without a DISCONNECT (crash, SIGKILL, lost link). */
export interface MqttWill {
  topic: string;
  payload: Buffer | string;
  qos?: Qos;
  retain?: boolean;
}

/** TLS settings of an `mqtts://` connection. The server's certificate is always verified. */
export interface MqttTlsOptions {
  /** PEM CA certificate(s) the broker's certificate must chain to (the fleet CA); default Node's trusted CAs. */
  ca?: string | Buffer | string[] | Buffer[];
  /** A client certificate (PEM) and its key, for a broker that asks for one (a device's fleet certificate). */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** The name the certificate must carry when it differs from the URL's host. */
  servername?: string;
}

export interface MqttBusOptions {
  /** `mqtt://host:port` (also `mqtts://`, `ws://`); credentials in the URL are honoured, never logged. */
  url: string;
  /** Stable per device or hub instance: a persistent session is keyed by it. */
  clientId: string;
  username?: string;
  password?: string;
  /** With an `mqtts://` (or `tls://`, `ssl://`, `wss://`) url only: the CA to verify the broker with, a client certificate. */
  tls?: MqttTlsOptions;
  will?: MqttWill;
  /** Default false: a persistent session, so QoS 1 messages queued while away are delivered on return. */
  clean?: boolean;
  /** MQTT keep-alive; the broker declares the client dead (and sends its will) after 1.5 × this. Default 30. */
  keepaliveSec?: number;
  /** Delays between reconnect attempts. Default 250 ms doubling up to 30 s, 20 % jitter. */
  reconnect?: BackoffOptions;
  /**
   * How long `connect()` keeps trying before it rejects with `bus_unreachable`. Default 10 000.
   * Infinity: for ever, a refused CONNACK included (it resolves at the first connection).
   */
  connectTimeoutMs?: number;
  /** How long one attempt waits for the broker's CONNACK. Default min(connectTimeoutMs, 10 000). */
  attemptTimeoutMs?: number;
  /** How long `close()` waits for in-flight messages before it drops the socket. Default 2 000. */
  closeTimeoutMs?: number;
  /**
   * The MQTT version to offer first. Default 5; a broker that speaks only 3.1.1 (it answers "unacceptable
   * protocol version") is then spoken to in 3.1.1 for the rest of the bus's life.
   */
  protocolVersion?: 4 | 5;
  /** QoS of `publish` and `subscribe` when the caller gives none. Default 1 (the spec's bus). */
  defaultQos?: Qos;
  logger?: BusLogger;
}

export interface MqttBusStats {
  /** Why the last attempt failed in its TLS handshake (a certificate of another CA, a name mismatch…); null once connected. */
  tlsFailure?: { code: string; message: string } | null;
  /** Successful CONNACKs since start, the first included. */
  connects: number;
  messagesIn: number;
  published: number;
  handlerErrors: number;
  /** Epoch ms of the current connection, null while disconnected. */
  connectedSince: number | null;
  /** Whether the broker resumed the session at the latest CONNACK (false: subscriptions were restored by us). */
  sessionPresent: boolean;
  /** The MQTT version of the current (or last) connection: 5, or 4 (3.1.1) with a broker that speaks no 5. */
  protocolVersion: 4 | 5;
}
