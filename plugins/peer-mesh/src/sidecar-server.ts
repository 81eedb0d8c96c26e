import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Logger, PeerHelloAck } from 'lookout/core';
import type { SidecarMaterial } from './sidecar-material.js';

/** A peer query carries at most a small JSON body; anything larger is refused before it is read. */
const MAX_BODY_BYTES = 16 * 1024;
const MAX_CONNECTIONS = 64;

export interface SidecarOptions {
  host: string;
  port: number;
  material: SidecarMaterial;
  /** The answer to peer_hello for a caller (its client certificate's CN). */
  peerHello(caller: string): PeerHelloAck;
  log: Logger;
}

export interface SidecarStats {
  queries_answered: number;
  handshakes_refused: number;
}

/**
 * The mTLS sidecar: TLS 1.3 only, a client certificate required and checked against the pinned
 * fleet CA (nothing else is trusted), serving `POST /peer/query?q=<query>`. A refused handshake
 * never reaches the handler; it is counted.
 */
export class SidecarServer {
  readonly stats: SidecarStats = { queries_answered: 0, handshakes_refused: 0 };
  private readonly server: Server;
  private boundPort: number | null = null;

  constructor(private readonly o: SidecarOptions) {
    const { ca, cert, key } = o.material;
    this.server = createServer({ ca, cert, key, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.3', handshakeTimeout: 10_000 }, (req, res) =>
      this.handle(req, res),
    );
    this.server.maxConnections = MAX_CONNECTIONS;
    this.server.requestTimeout = 10_000;
    this.server.headersTimeout = 10_000;
    this.server.keepAliveTimeout = 5_000;
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
      this.server.once('error', reject);
      this.server.listen(this.o.port, this.o.host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        this.boundPort = typeof address === 'object' && address ? address.port : this.o.port;
        resolve(this.boundPort);
      });
    });
  }

  close(): Promise<void> {
    this.boundPort = null;
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
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
