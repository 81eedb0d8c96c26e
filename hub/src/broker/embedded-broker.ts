import { createServer, type Socket } from 'node:net';
import { Aedes, type AuthenticateError, type Client, type PublishPacket } from 'aedes';
import { boundPort, listen } from 'lookout/lib/net';
import { guardPacketSizes } from './packet-size-guard.js';
import { withEveryMatchingIdentifier } from './subscription-identifiers.js';
import { connectionAdmission } from './connection-admission.js';
import { brokerConnectionBudget } from './descriptor-budget.js';
import { certificateIdentity, createBrokerTlsServer, type BrokerTlsListenerOptions, type CertificateIdentity } from './broker-tls-listener.js';
import type { TLSSocket } from 'node:tls';
import { LookoutError } from 'lookout/core';
import { silentBusLogger, type BusLogger } from 'lookout/lib/mqtt';
import { busPassword, busRoleOf, HUB_BUS_USER, mayPublish, maySubscribe, type BusRole, sameSecret } from 'lookout/lib/auth';

/** One shared secret: every client presents it (and the user name, when set). No per-client rights. */
export interface SharedSecretAuth {
  /** When set, the client must present exactly this user name; otherwise any user name is accepted. */
  username?: string;
  password: string;
}

/**
 * Per-client identity (the hub's default): each client authenticates as itself, its password
 * derived from the fleet secret, and the bus ACL (core/src/auth/bus-acl.ts) limits what it may
 * publish and read; a device must also use its id as client id, so it cannot take over another's session.
 */
export interface FleetIdentityAuth {
  fleetSecret: string;
}

export type EmbeddedBrokerAuth = SharedSecretAuth | FleetIdentityAuth;

export interface EmbeddedBrokerOptions {
  /** TCP port; 0 picks a free one (read it back from `port`). The hub passes 1883 by default. */
  port: number;
  /** Default 127.0.0.1: the broker is reachable from elsewhere only when asked. */
  host?: string;
  /** When given, clients without these credentials are refused (CONNACK 4 wrong, 5 missing). */
  auth?: EmbeddedBrokerAuth;
  /** A larger payload is acknowledged to its publisher but neither retained nor delivered. */
  maxPayloadBytes?: number;
  /** Topic filters one client may hold at once (default 256); more are refused in the SUBACK (0x80). */
  maxSubscriptionsPerClient?: number;
  /**
   * Connections held in all; more are closed as they are accepted. Default: the process's descriptor
   * limit less a reserve for the hub's HTTP side and state (descriptor-budget.ts).
   */
  maxConnections?: number;
  /** Connections one remote address may hold (default a quarter of maxConnections, at most 1024). */
  maxConnectionsPerAddress?: number;
  /** From accept to a complete CONNECT (default 10 s); a socket still without one is closed. */
  connectTimeoutMs?: number;
  /** The largest CONNECT (client id, credentials, a will), read before anything is authenticated (default 8 KiB). */
  maxConnectBytes?: number;
  /**
   * A second listener speaking MQTT over TLS, to the same broker under the same caps (connections
   * in all and per address count both listeners) and bounds (CONNECT time and size, packet sizes).
   */
  tls?: BrokerTlsListenerOptions;
  logger?: BusLogger;
}

/** The TLS listener of a running broker. */
export interface EmbeddedBrokerTls {
  /** The address it is bound to. */
  readonly host: string;
  readonly port: number;
  /** `mqtts://<host>:<port>`, with 127.0.0.1 in place of a wildcard listen address. */
  readonly url: string;
  /** SHA-256 fingerprint of the certificate new connections get. */
  fingerprint(): string;
  /** Reads the certificate files again (as SIGHUP and a change to them do). */
  reload(): Promise<{ ok: true; fingerprint: string; changed: boolean } | { ok: false; reason: string }>;
}

export interface EmbeddedBroker {
  /** The address the plain listener is bound to. */
  readonly host: string;
  readonly port: number;
  /** Present when the broker listens with TLS too. */
  readonly tls?: EmbeddedBrokerTls;
  /** `mqtt://<host>:<port>`, with 127.0.0.1 in place of a wildcard listen address. */
  readonly url: string;
  readonly connectedClients: number;
  /** The address the connected client `clientId` came from (its socket's remote address), or undefined when none is connected. */
  remoteAddressOf(clientId: string): string | undefined;
  /** Stops listening, disconnects every client and closes the broker, so the process can exit. */
  close(): Promise<void>;
}

/**
 * A CONNECT (client id, credentials, a will: a device's status) is small, and nothing is
 * authenticated before it: every socket may hold this much of an unfinished one.
 */
const DEFAULT_CONNECT_MAX_BYTES = 8 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const MAX_CONNECTIONS_PER_ADDRESS = 1024;
/** The largest packet an authenticated client may announce, unless maxPayloadBytes asks for more. */
const DEFAULT_MAX_PACKET_BYTES = 8 * 1024 * 1024;

const DEFAULT_MAX_SUBSCRIPTIONS = 256;

/**
 * Counts the filters each client holds: those granted in earlier SUBSCRIBEs (also restored into a
 * persistent session) and those granted so far in the one being authorized, whose filters aedes adds
 * only after every one was authorized.
 */
function subscriptionCap(max: number, log: BusLogger) {
  const granted = new WeakMap<Client, Set<string>>();
  return {
    admit(client: Client, filter: string): boolean {
      let mine = granted.get(client);
      if (!mine) granted.set(client, (mine = new Set(Object.keys(restoredFilters(client)))));
      if (mine.has(filter)) return true;
      if (mine.size >= max) {
        log.warn({ clientId: client.id, filter, max }, 'broker refused a subscription: the client holds as many filters as it may');
        return false;
      }
      mine.add(filter);
      return true;
    },
    release(client: Client, filters: string[]): void {
      const mine = granted.get(client);
      for (const f of filters) mine?.delete(f);
    },
  };
}

/** The filters aedes holds for a client (a persistent session's, restored at connect); aedes' types leave the field out. */
function restoredFilters(client: Client): Record<string, unknown> {
  return (client as Client & { subscriptions?: Record<string, unknown> }).subscriptions ?? {};
}

/** CONNACK return codes of MQTT 3.1.1. */
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;

/** An MQTT broker inside the hub process (aedes 1.x, in-memory: a restart forgets sessions and retained messages). */
export const EmbeddedBroker = {
  async start(options: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
    const host = options.host ?? '127.0.0.1';
    const log = options.logger ?? silentBusLogger;
    if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
      throw new LookoutError('config_invalid', `broker port must be 0..65535, got ${String(options.port)}`, { details: { key: 'port' } });
    }
    const secret = options.auth && ('fleetSecret' in options.auth ? options.auth.fleetSecret : options.auth.password);
    if (options.auth && !secret) {
      throw new LookoutError('config_invalid', 'broker auth needs a non-empty secret', { details: { key: 'auth' } });
    }

    const caps = connectionCaps(options);
    const connectTimeout = positive(options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs');
    const maxConnectBytes = positive(options.maxConnectBytes ?? DEFAULT_CONNECT_MAX_BYTES, 'maxConnectBytes');

    // aedes closes a client whose CONNECT has not arrived this long after accept.
    const broker = await Aedes.createBroker({ connectTimeout });
    // The role of each client the fleet identity authenticated; a client without one has every right.
    const roles = new WeakMap<Client, BusRole>();
    const withinRights = (client: Client, filter: string): boolean => {
      const role = roles.get(client);
      if (!role || maySubscribe(role, filter)) return true;
      log.warn({ clientId: client.id, filter }, 'broker refused a subscription outside the client’s rights');
      return false;
    };
    // A client (a persistent session above all) must not make the broker hold any number of filters for it.
    const held = subscriptionCap(options.maxSubscriptionsPerClient ?? DEFAULT_MAX_SUBSCRIPTIONS, log);
    broker.on('unsubscribe', (filters: string[], client: Client) => held.release(client, filters));
    broker.authorizeSubscribe = (client, sub, done) => done(null, withinRights(client, sub.topic) && held.admit(client, sub.topic) ? sub : null);
    // The TLS socket under each client's guarded stream: its verified certificate names the client.
    const tlsOf = new WeakMap<object, TLSSocket>();
    const certificateIdOf = (client: Client): CertificateIdentity => {
      const socket = tlsOf.get(client.conn);
      return socket ? certificateIdentity(socket) : undefined;
    };
    if (options.auth && 'fleetSecret' in options.auth) {
      broker.authenticate = fleetAuthenticator(options.auth.fleetSecret, roles, log, certificateIdOf);
    } else if (options.auth) {
      broker.authenticate = authenticator(options.auth, log);
    }
    broker.authorizePublish = publishAuthorizer(options.maxPayloadBytes, roles, log);
    broker.authorizeForward = forwardFilter(options.maxPayloadBytes);
    broker.on('clientError', (client: Client, err: Error) => log.debug({ clientId: client.id, err: err.message }, 'broker client error'));
    broker.on('connectionError', (_client: Client, err: Error) => log.debug({ err: err.message }, 'broker connection error'));

    const sockets = new Set<Socket>();
    // aedes reads each client from the guarded stream, not the socket: the socket's address by stream.
    const remoteOf = new WeakMap<object, string>();
    const limits = {
      beforeConnect: maxConnectBytes,
      // A payload over maxPayloadBytes is still read (then acknowledged and dropped): allow some beyond it.
      afterConnect: Math.max(4 * (options.maxPayloadBytes ?? 0), DEFAULT_MAX_PACKET_BYTES),
    };
    /** Hands an admitted socket (plain, or TLS after its handshake) to aedes through the packet-size guard. */
    const accept = (socket: Socket): void => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      const conn = guardPacketSizes(socket, limits, (declared) =>
        log.warn({ remote: socket.remoteAddress, declared }, 'broker dropped a connection announcing an oversized packet'),
      );
      if (socket.remoteAddress) remoteOf.set(conn, socket.remoteAddress);
      if ('encrypted' in socket) tlsOf.set(conn, socket as TLSSocket);
      broker.handle(conn);
    };
    const server = createServer((socket) => {
      if (admission.admit(socket)) accept(socket);
    });
    const secure = options.tls ? await createBrokerTlsServer(options.tls, log, accept).catch(closeBrokerAndThrow(broker)) : undefined;
    // The raw socket is admitted (and counted) before its handshake: a handshake holds a slot too.
    secure?.server.on('connection', (raw: Socket) => {
      if (admission.admit(raw)) {
        sockets.add(raw);
        raw.once('close', () => sockets.delete(raw));
      }
    });
    // Caps connections in all and per address, before aedes makes a client of them.
    const admission = connectionAdmission(secure ? [server, secure.server] : server, caps, log);
    const tlsHost = options.tls?.host ?? '127.0.0.1';
    try {
      await listen(server, options.port, host, { name: 'the embedded broker', code: 'broker_start_failed' });
      if (secure && options.tls) await listen(secure.server, options.tls.port, tlsHost, { name: 'the embedded broker (TLS)', code: 'broker_start_failed' });
    } catch (err) {
      secure?.certificate.close();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      throw err;
    }
    const port = boundPort(server, options.port);
    const boundHost = boundAddress(server, host);
    const tls: EmbeddedBrokerTls | undefined =
      secure && options.tls
        ? {
            host: boundAddress(secure.server, tlsHost),
            port: boundPort(secure.server, options.tls.port),
            get url() {
              return `mqtts://${urlHostOf(this.host)}:${this.port}`;
            },
            fingerprint: () => secure.certificate.current().fingerprint,
            reload: () => secure.certificate.reload(),
          }
        : undefined;
    log.info(
      { host: boundHost, port, ...(tls ? { tls_host: tls.host, tls_port: tls.port } : {}), auth: options.auth !== undefined, ...caps },
      'embedded broker listening',
    );

    let closing: Promise<void> | null = null;
    return {
      host: boundHost,
      port,
      ...(tls ? { tls } : {}),
      url: `mqtt://${urlHostOf(boundHost)}:${port}`,
      get connectedClients() {
        return broker.connectedClients;
      },
      remoteAddressOf(clientId) {
        const client = (broker as unknown as { clients: Record<string, Client | undefined> }).clients[clientId];
        return client ? remoteOf.get(client.conn) : undefined;
      },
      close() {
        closing ??= (async () => {
          const serverClosed = Promise.all([server, ...(secure ? [secure.server] : [])].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
          secure?.certificate.close();
          await new Promise<void>((resolve) => broker.close(() => resolve()));
          // aedes ends its clients' streams; a socket that never spoke MQTT is ours to drop.
          for (const socket of sockets) socket.destroy();
          await serverClosed;
          log.info({ port }, 'embedded broker closed');
        })();
        return closing;
      },
    };
  },
};

/** The address a listening server is bound to (the asked host until it listens). */
function boundAddress(server: { address(): unknown }, fallback: string): string {
  const address = server.address() as { address?: string } | null;
  return address?.address ?? fallback;
}

/** A listen address as a URL host: loopback for a wildcard, brackets for IPv6. */
function urlHostOf(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
}

/** Closes the broker made so far when a later start step fails, then rethrows. */
function closeBrokerAndThrow(broker: Aedes): (err: unknown) => Promise<never> {
  return async (err) => {
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    throw err;
  };
}

function positive(value: number, key: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new LookoutError('config_invalid', `broker ${key} must be a positive integer, got ${String(value)}`, { details: { key } });
  }
  return value;
}

/** The connection caps asked for, or defaults sized from the process's descriptor limit. */
function connectionCaps(options: EmbeddedBrokerOptions): { maxConnections: number; maxConnectionsPerAddress: number } {
  const maxConnections = positive(options.maxConnections ?? brokerConnectionBudget(), 'maxConnections');
  const perAddress = options.maxConnectionsPerAddress ?? Math.min(MAX_CONNECTIONS_PER_ADDRESS, Math.max(1, Math.floor(maxConnections / 4)));
  return { maxConnections, maxConnectionsPerAddress: positive(perAddress, 'maxConnectionsPerAddress') };
}

function authenticator(auth: SharedSecretAuth, log: BusLogger): Aedes['authenticate'] {
  return (client, username, password, done) => {
    if (password === undefined) {
      log.warn({ clientId: client.id, username }, 'broker refused a client without credentials');
      done(refusal(NOT_AUTHORIZED, 'credentials required'), false);
      return;
    }
    const userOk = auth.username === undefined || (username !== undefined && sameSecret(username, auth.username));
    const passwordOk = sameSecret(password, auth.password);
    if (userOk && passwordOk) {
      done(null, true);
      return;
    }
    log.warn({ clientId: client.id, username }, 'broker refused a client with wrong credentials');
    done(refusal(BAD_USERNAME_OR_PASSWORD, 'bad user name or password'), false);
  };
}

function fleetAuthenticator(
  fleetSecret: string,
  roles: WeakMap<Client, BusRole>,
  log: BusLogger,
  certificateIdOf: (client: Client) => CertificateIdentity = () => undefined,
): Aedes['authenticate'] {
  return (client, username, password, done) => {
    // A fleet certificate (TLS listener with the fleet CA) names its client: a device may present it instead of a password.
    const certificate = certificateIdOf(client);
    if (certificate && 'refused' in certificate) {
      log.warn({ clientId: client.id, username, reason: certificate.refused }, 'broker refused a client certificate the fleet CA did not sign');
      done(refusal(NOT_AUTHORIZED, 'the client certificate is not of the fleet CA'), false);
      return;
    }
    const certified = certificate?.id;
    if (certified !== undefined && username !== undefined && username !== certified) {
      log.warn({ clientId: client.id, username, certificate: certified }, 'broker refused a client whose user name is not the one its certificate names');
      done(refusal(NOT_AUTHORIZED, 'the user name must be the one the client certificate names'), false);
      return;
    }
    if (certified !== undefined && password === undefined) {
      const role = busRoleOf(certified);
      if (role?.kind !== 'device' || client.id !== role.id) {
        log.warn({ clientId: client.id, certificate: certified }, 'broker refused a certificate that does not name this device (client id = device id)');
        done(refusal(NOT_AUTHORIZED, 'a certificate stands in for the password of a device connecting with its own id as client id'), false);
        return;
      }
      roles.set(client, role);
      done(null, true);
      return;
    }
    const role = username === undefined ? undefined : busRoleOf(username);
    if (password === undefined || username === undefined) {
      log.warn({ clientId: client.id }, 'broker refused a client without credentials');
      done(refusal(NOT_AUTHORIZED, 'credentials required'), false);
      return;
    }
    // The password is checked before the role, so a refusal says nothing about which names exist.
    if (!sameSecret(password, busPassword(fleetSecret, username)) || !role) {
      log.warn({ clientId: client.id, username }, 'broker refused a client with wrong credentials');
      done(refusal(BAD_USERNAME_OR_PASSWORD, 'bad user name or password'), false);
      return;
    }
    if (role.kind === 'device' && client.id !== role.id) {
      log.warn({ clientId: client.id, username }, 'broker refused a device whose client id is not its own id');
      done(refusal(NOT_AUTHORIZED, 'a device connects with its own id as client id'), false);
      return;
    }
    // The hub's client ids (hub-bus-client-id.ts) are the hub's alone: the operator cannot end its session either.
    if (role.kind !== 'hub' && client.id.startsWith(`${HUB_BUS_USER}-`)) {
      log.warn({ clientId: client.id, username }, 'broker refused a client using a client id reserved for the hub');
      done(refusal(NOT_AUTHORIZED, 'client ids under lookout-hub- are the hub’s'), false);
      return;
    }
    roles.set(client, role);
    done(null, true);
  };
}

function refusal(returnCode: number, message: string): AuthenticateError {
  return Object.assign<Error, { returnCode: number }>(new Error(message), { returnCode });
}

function payloadSize(packet: { payload?: Buffer | string }): number {
  return packet.payload === undefined ? 0 : Buffer.byteLength(packet.payload);
}

/**
 * An oversized publish is acknowledged and then dropped (never retained, never forwarded): refusing
 * it would disconnect the client, whose QoS 1 retry after reconnecting would be refused again, forever.
 */
function publishAuthorizer(maxPayloadBytes: number | undefined, roles: WeakMap<Client, BusRole>, log: BusLogger): Aedes['authorizePublish'] {
  return (client, packet: PublishPacket, callback) => {
    // Keep aedes's own rule: `$SYS/` belongs to the broker.
    if (packet.topic.startsWith('$SYS/')) {
      callback(new Error('$SYS/ topic is reserved'));
      return;
    }
    // Refused, the client is disconnected (MQTT 3.1.1 has no negative PUBACK): a device writing
    // another's topics is misbehaving, and its retained message never replaces the other's.
    const role = client ? roles.get(client) : undefined;
    if (role && !mayPublish(role, packet.topic, packet.retain)) {
      log.warn({ clientId: client?.id, topic: packet.topic }, 'broker refused a publish outside the client’s rights');
      callback(new Error(`not authorized to publish to ${packet.topic}`));
      return;
    }
    const size = payloadSize(packet);
    if (maxPayloadBytes !== undefined && size > maxPayloadBytes) {
      log.warn({ clientId: client?.id, topic: packet.topic, size, maxPayloadBytes }, 'broker dropped an oversized publish');
      packet.retain = false;
    }
    callback(null);
  };
}

/** Drops a copy over maxPayloadBytes; names in each copy every subscription it matches (subscription-identifiers.ts). */
function forwardFilter(maxPayloadBytes: number | undefined): Aedes['authorizeForward'] {
  return (client, packet) => (maxPayloadBytes !== undefined && payloadSize(packet) > maxPayloadBytes ? null : withEveryMatchingIdentifier(client, packet));
}
