import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'lookout/core';
import type { PeerHelloAck } from 'lookout/core/contracts';
import type { SidecarMaterial } from './sidecar-material.js';

/** A peer query carries at most a small JSON body; anything larger is refused before it is read. */
const MAX_BODY_BYTES = 16 * 1024;

/**
 * Connections are taken before anyone is authenticated, so they are what an attacker can hold:
 * a handshake must finish in a few seconds (a TLS 1.3 handshake on a LAN takes milliseconds), one
 * address holds only a few connections (peers and the hub each need one or two at a time), and the
 * total is high enough that it takes that many addresses to fill it.
 *
 * Connections not yet through their handshake are capped per address on their own, and a new one
 * over that cap closes the oldest of them rather than being refused: an address (127.0.0.1 on a
 * shared machine, a NAT) holding idle sockets then cannot keep out a real client from the same
 * address, whose handshake finishes in milliseconds, long before the sockets it evicts could.
 * Refusing the newcomer instead (the rule before) let 16 idle sockets lock the address out for as
 * long as they were renewed.
 */
export interface SidecarLimits {
  handshakeTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
  /** Connections from one address still in (or before) their handshake. */
  maxPendingPerAddress: number;
}
export const DEFAULT_SIDECAR_LIMITS: SidecarLimits = { handshakeTimeoutMs: 3000, maxConnections: 512, maxConnectionsPerAddress: 16, maxPendingPerAddress: 4 };

export interface SidecarOptions {
  host: string;
  port: number;
  material: SidecarMaterial;
  /** The answer to peer_hello for a caller (its client certificate's CN). */
  peerHello(caller: string): PeerHelloAck;
  log: Logger;
  limits?: Partial<SidecarLimits>;
}

export interface SidecarStats {
  queries_answered: number;
  handshakes_refused: number;
  /** Connections closed unread: over the per-address or the total cap, or evicted before their handshake by a newer one from the same address. */
  connections_refused: number;
  /** Connections closed because their handshake had not finished by the deadline (also counted in handshakes_refused). */
  handshakes_timed_out: number;
}

/**
 * The mTLS sidecar: TLS 1.3 only, a client certificate required and checked against the pinned
 * fleet CA (nothing else is trusted), serving `POST /peer/query?q=<query>`. A refused handshake
 * never reaches the handler; it is counted. A plain TCP listener in front admits each connection
 * under the limits (per address, in total) before TLS sees it, so idle sockets from one address
 * cannot keep the fleet out.
 */
export class SidecarServer {
  readonly stats: SidecarStats = { queries_answered: 0, handshakes_refused: 0, connections_refused: 0, handshakes_timed_out: 0 };
  private readonly server: Server;
  private readonly front: TcpServer;
  private readonly limits: SidecarLimits;
  /** Open connections, and how many each remote address holds. */
  private readonly sockets = new Set<Socket>();
  private readonly perAddress = new Map<string, number>();
  /** Per address, its connections not yet through the handshake, oldest first, each with its deadline timer. */
  private readonly pending = new Map<string, Map<Socket, { timer: NodeJS.Timeout; peerKey: string }>>();
  /** remote address:port of a pending connection → its socket (the TLS socket names the same pair). */
  private readonly pendingByPeer = new Map<string, Socket>();
  private boundPort: number | null = null;

  constructor(private readonly o: SidecarOptions) {
    const { ca, cert, key } = o.material;
    this.limits = { ...DEFAULT_SIDECAR_LIMITS, ...o.limits };
    this.server = createServer(
      {
        ca,
        cert,
        key,
        requestCert: true,
        rejectUnauthorized: true,
        minVersion: 'TLSv1.3',
        // A backstop only: the front's own deadline (admit) closes a pending connection first and counts it once.
        handshakeTimeout: 2 * this.limits.handshakeTimeoutMs,
      },
      (req, res) => this.handle(req, res),
    );
    this.front = createTcpServer((socket) => this.admit(socket));
    // The HTTPS server never listens itself (the front hands it each admitted socket), so its
    // request and header timeouts, checked by a listening server's sweep, do not apply: a socket
    // silent this long after its handshake is closed instead (a peer query is one small request).
    this.server.timeout = 10_000;
    this.server.keepAliveTimeout = 5_000;
    // Through the handshake: no longer pending, so no longer evictable nor on the deadline.
    this.server.on('secureConnection', (tls: TLSSocket) => {
      const socket = this.pendingByPeer.get(`${tls.remoteAddress}:${tls.remotePort}`);
      if (socket) this.settle(socket);
    });
    this.server.on('tlsClientError', (err: Error) => {
      this.stats.handshakes_refused += 1;
      o.log.debug({ err: err.message }, 'sidecar handshake refused');
    });
  }

  get port(): number | null {
    return this.boundPort;
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.front.once('error', reject);
      this.front.listen(this.o.port, this.o.host, () => {
        this.front.off('error', reject);
        const address = this.front.address();
        this.boundPort = typeof address === 'object' && address ? address.port : this.o.port;
        resolve(this.boundPort);
      });
    });
  }

  close(): Promise<void> {
    this.boundPort = null;
    return new Promise((resolve) => {
      this.front.close(() => resolve());
      this.server.closeAllConnections();
      for (const socket of this.sockets) socket.destroy();
    });
  }

  /**
   * A new TCP connection: an address at its pending cap first loses its oldest pending connection;
   * then one over a cap is refused at once, else handed to TLS with a deadline for its handshake.
   */
  private admit(socket: Socket): void {
    const address = socket.remoteAddress ?? '';
    const pending = this.pending.get(address);
    if (pending && pending.size >= this.limits.maxPendingPerAddress) this.evictOldest(pending);
    const held = this.perAddress.get(address) ?? 0;
    if (held >= this.limits.maxConnectionsPerAddress || this.sockets.size >= this.limits.maxConnections) {
      this.stats.connections_refused += 1;
      socket.destroy();
      return;
    }
    this.perAddress.set(address, held + 1);
    this.sockets.add(socket);
    const peerKey = `${address}:${socket.remotePort}`;
    const timer = setTimeout(() => {
      // Silent or slow past the deadline: closed whatever TLS's own timer does (it runs only once bytes flow).
      this.stats.handshakes_timed_out += 1;
      socket.destroy();
    }, this.limits.handshakeTimeoutMs);
    timer.unref();
    const mine = pending ?? new Map<Socket, { timer: NodeJS.Timeout; peerKey: string }>();
    mine.set(socket, { timer, peerKey });
    this.pending.set(address, mine);
    this.pendingByPeer.set(peerKey, socket);
    socket.once('close', () => {
      this.settle(socket, address);
      this.sockets.delete(socket);
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
    });
    this.server.emit('connection', socket);
  }

  /** Out of the pending set (handshake done, or closed): its deadline stops. */
  private settle(socket: Socket, address = socket.remoteAddress ?? ''): void {
    const list = this.pending.get(address);
    const entry = list?.get(socket);
    if (!list || !entry) return;
    clearTimeout(entry.timer);
    list.delete(socket);
    if (list.size === 0) this.pending.delete(address);
    this.pendingByPeer.delete(entry.peerKey);
  }

  private evictOldest(list: Map<Socket, { timer: NodeJS.Timeout; peerKey: string }>): void {
    const oldest = list.keys().next().value;
    if (!oldest) return;
    this.settle(oldest);
    this.stats.connections_refused += 1;
    oldest.destroy();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://sidecar');
    if (url.pathname !== '/peer/query')
      return void this.error(res, 404, 'peer-mesh.route_unknown', `no ${url.pathname} on the sidecar (POST /peer/query?q=peer_hello)`);
    if (req.method !== 'POST') return void this.error(res, 405, 'peer-mesh.method_not_allowed', `${req.method} /peer/query: only POST`, { allow: 'POST' });
    const q = url.searchParams.get('q');
    if (q !== 'peer_hello') return void this.error(res, 400, 'peer-mesh.query_unknown', `unknown peer query q=${JSON.stringify(q)}; known: peer_hello`);
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) return void this.error(res, 413, 'peer-mesh.body_too_large', `a peer query body is at most ${MAX_BODY_BYTES} bytes`);
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_BODY_BYTES) {
        this.error(res, 413, 'peer-mesh.body_too_large', `a peer query body is at most ${MAX_BODY_BYTES} bytes`);
        req.destroy();
      }
    });
    req.on('end', () => {
      if (res.headersSent) return;
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      // The handshake guarantees a certificate of the fleet CA; one without a CN is named by its fingerprint.
      const caller = (typeof peer.subject?.CN === 'string' && peer.subject.CN) || peer.fingerprint256;
      this.stats.queries_answered += 1;
      this.json(res, 200, this.o.peerHello(caller));
    });
  }

  private error(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
    if (res.headersSent) return;
    this.json(res, status, { error: { code, message } }, headers);
  }

  private json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }
}
