import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { SecureContextOptions, TLSSocket } from 'node:tls';
import type { AddressInfo, Socket } from 'node:net';
import type { Element } from '@xmldom/xmldom';
import { isLoopbackHostHeader, unmapIpv4 } from 'lookout/lib/net';
import { toLookoutError, type Logger } from 'lookout/core';
import { AuthFault, type HeaderCheck, type OnvifAuth } from '../auth/onvif-auth.js';
import { deviceService } from '../device/device-service.js';
import { imagingService } from '../imaging/imaging-service.js';
import { media1 } from '../media/media1-service.js';
import { media2 } from '../media/media2-service.js';
import { NS } from '../soap/namespaces.js';
import { faults, SoapFault } from '../soap/soap-fault.js';
import { exceedsElementBudget } from '../soap/element-budget.js';
import { parseSoapRequest } from '../soap/soap-request.js';
import { SOAP_CONTENT_TYPE, soapEnvelope, soapFaultEnvelope } from '../soap/soap-response.js';
import type { OnvifStats } from '../service.js';
import { PATHS, type OnvifSurface, type RequestInfo } from '../surface.js';
import { BodyTimedOut, BodyTooLarge, readBody } from './body-reader.js';
import { ConnectionCap, type ConnectionCapOptions } from './connection-cap.js';
import { SnapshotUnavailable, type Snapshot } from './snapshot.js';

/** The Events service (plugins/onvif/src/events): resolves to the response Body content or rejects with SoapFault. */
export interface EventsHandler {
  handle(action: string, body: Element, path: string, signal: AbortSignal, request: RequestInfo): Promise<string>;
}

export interface OnvifServerOptions {
  host: string;
  port: number;
  surface: OnvifSurface;
  auth: OnvifAuth;
  snapshot: Snapshot;
  events: EventsHandler | undefined;
  /** Largest body of a request its headers authenticated (or of any request when no password is set). */
  maxBodyBytes: number;
  /** What a request its headers did not authenticate may send before the SOAP body decides (a token, a pre-auth operation). */
  preAuth: { maxBodyBytes: number; maxElements: number; bodyTimeoutMs: number };
  /** Headers and body of any request must have arrived by then (408 and closed). */
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  connections: ConnectionCapOptions;
  log: Logger;
  /** HTTPS with the device certificate (the same services, beside the plain HTTP server, as cameras offer them). */
  tls?: { cert: Buffer; key: Buffer };
}

const TLS_CONTEXT = { minVersion: 'TLSv1.2' } as const;

/** How long a refused connection may stay half-closed for its answer to reach the client. */
const CLOSE_GRACE_MS = 500;

type Service = 'device' | 'media' | 'media2' | 'events' | 'imaging';

const BY_NAMESPACE: Record<string, Service> = {
  [NS.tds]: 'device',
  [NS.trt]: 'media',
  [NS.tr2]: 'media2',
  [NS.tev]: 'events',
  [NS.wsnt]: 'events',
  [NS.timg]: 'imaging',
};
const BY_PATH: Record<string, Service> = {
  [PATHS.device]: 'device',
  [PATHS.media]: 'media',
  [PATHS.media2]: 'media2',
  [PATHS.events]: 'events',
  [PATHS.imaging]: 'imaging',
};

/**
 * The ONVIF HTTP server: SOAP 1.2 over POST on the service paths, the snapshot over GET. Every
 * failure is a SOAP fault in XML; a bad request never takes the server down.
 */
export class OnvifServer {
  private readonly server: Server | HttpsServer;
  private readonly closing = new AbortController();
  private readonly cap: ConnectionCap;
  private parsedBodies = 0;
  private refusedUnread = 0;

  constructor(private readonly o: OnvifServerOptions) {
    // Timeouts are checked this often (Node's default, 30 s, would let a slow body live that long past its limit).
    const checkEvery = Math.max(250, Math.min(1000, o.headersTimeoutMs / 2));
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      this.route(req, res).catch((err: unknown) => {
        o.log.error({ err: toLookoutError(err).message }, 'ONVIF request failed');
        if (!res.headersSent) this.fault(res, new SoapFault('Receiver', 'ter:Action', 'internal error', 500));
        else res.destroy();
      });
    };
    this.server = o.tls
      ? createHttpsServer(
          { connectionsCheckingInterval: checkEvery, cert: o.tls.cert, key: o.tls.key, ...TLS_CONTEXT, handshakeTimeout: o.headersTimeoutMs },
          handler,
        )
      : createServer({ connectionsCheckingInterval: checkEvery }, handler);
    // A client that fails the handshake (does not trust the certificate, a scanner) is its own matter.
    if (o.tls) this.server.on('tlsClientError', (_err: Error, socket: TLSSocket) => socket.destroy());
    // Slow or stuck clients do not hold sockets: the request (headers and body) must arrive in time. A held
    // PullMessages is not affected: the timer stops once the request is received, the answer may take longer.
    this.server.requestTimeout = o.requestTimeoutMs;
    this.server.headersTimeout = Math.min(o.headersTimeoutMs, o.requestTimeoutMs);
    this.server.keepAliveTimeout = 10_000;
    this.cap = new ConnectionCap(o.connections);
    // The TCP connection, before any handshake: the cap holds for HTTPS too.
    this.server.on('connection', (socket: Socket) => this.cap.admit(socket));
  }

  stats(): OnvifStats {
    return { parsedBodies: this.parsedBodies, refusedUnread: this.refusedUnread, refusedConnections: this.cap.refused, connections: this.cap.connections };
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.o.port, this.o.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return (this.server.address() as AddressInfo).port;
  }

  /** A renewed certificate for new connections (open ones keep theirs); HTTPS servers only. */
  /** Serves a renewed certificate to new connections (open ones keep theirs); HTTPS only. */
  setSecureContext(context: SecureContextOptions): void {
    if (this.o.tls) (this.server as HttpsServer).setSecureContext({ ...context, ...TLS_CONTEXT });
  }

  async close(): Promise<void> {
    this.closing.abort(new Error('the ONVIF server is stopping'));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    // Without credentials only loopback listens; a page in a browser must not reach it by DNS rebinding.
    if (!this.o.auth.required && !isLoopbackHostHeader(req.headers.host)) {
      return this.refuseAndClose(
        req,
        res,
        new SoapFault('Sender', 'ter:NotAuthorized', 'Sender not authorized: this device has no ONVIF password and answers loopback names only', 403),
      );
    }
    if (path === PATHS.snapshot) return this.snapshot(req, res);
    const known = path in BY_PATH || path.startsWith(PATHS.subscription);
    if (!known) {
      return this.refuseAndClose(req, res, new SoapFault('Sender', 'ter:ActionNotSupported', `no ONVIF service at ${path}`, 404));
    }
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return this.refuseAndClose(req, res, new SoapFault('Sender', 'ter:ActionNotSupported', `${req.method ?? ''} ${path}: SOAP requests are POSTed`, 405));
    }
    const http = { authorization: req.headers.authorization, method: req.method, url: req.url ?? path };
    // HTTP Digest is decided from the headers: a request it authenticates may send a full body;
    // any other only a small one, quickly, and with few elements, before its token is checked.
    const headers = this.o.auth.checkHeaders(http);
    const pre = this.o.preAuth;
    const maxBytes = headers.authenticated ? this.o.maxBodyBytes : pre.maxBodyBytes;
    let text: string;
    try {
      text = (await readBody(req, maxBytes, headers.authenticated ? this.o.requestTimeoutMs : pre.bodyTimeoutMs)).toString('utf8');
    } catch (err) {
      if (err instanceof BodyTooLarge && headers.authenticated) {
        return this.refuseAndClose(req, res, new SoapFault('Sender', 'ter:WellFormed', `the request is larger than ${maxBytes} bytes`, 413));
      }
      if (err instanceof BodyTooLarge)
        return this.refuseUnread(req, res, headers, `a request without valid HTTP Digest credentials may carry at most ${maxBytes} bytes`);
      if (err instanceof BodyTimedOut) {
        if (!headers.authenticated) return this.refuseUnread(req, res, headers, `the body did not arrive within ${pre.bodyTimeoutMs} ms`);
        return this.refuseAndClose(req, res, new SoapFault('Sender', 'ter:WellFormed', 'the request body did not arrive in time', 408));
      }
      req.socket.destroy();
      return;
    }
    if (!headers.authenticated && exceedsElementBudget(text, pre.maxElements)) {
      return this.refuseUnread(req, res, headers, `a request without valid HTTP Digest credentials may hold at most ${pre.maxElements} XML elements`);
    }
    try {
      this.parsedBodies++;
      const request = parseSoapRequest(text);
      const user = this.o.auth.checkSoap(request.action, request.header, headers, req.socket.remoteAddress);
      const service = path.startsWith(PATHS.subscription) ? 'events' : (BY_NAMESPACE[request.namespace] ?? BY_PATH[path]);
      const info = requestInfo(req, user);
      const content = await this.dispatch(service, request.action, request.body, info, path, res);
      sendXml(res, 200, {}, soapEnvelope(content));
    } catch (err) {
      if (err instanceof SoapFault) return this.fault(res, err);
      throw err;
    }
  }

  /**
   * A 401 to a request its headers did not authenticate and whose body went past a pre-auth bound:
   * the Digest's own fault when it had a wrong one, else a challenge. The rest of the body is not read.
   */
  private refuseUnread(req: IncomingMessage, res: ServerResponse, headers: HeaderCheck, why: string): void {
    this.refusedUnread++;
    this.refuseAndClose(req, res, headers.fault ?? new AuthFault(`Sender not authorized: ${why}; sign in with HTTP Digest first`));
  }

  /**
   * Answers, then closes the connection without waiting for what is left of the body. The socket is
   * half-closed first and destroyed a moment later: destroying it at once, with the stranger's bytes
   * unread, sends a reset that can overtake the answer.
   */
  private refuseAndClose(req: IncomingMessage, res: ServerResponse, fault: SoapFault): void {
    const socket = req.socket;
    res.setHeader('Connection', 'close');
    res.once('finish', () => {
      socket.end();
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    });
    this.fault(res, fault);
  }

  private dispatch(
    service: Service | undefined,
    action: string,
    body: Element,
    info: RequestInfo,
    path: string,
    res: ServerResponse,
  ): Promise<string> | string {
    switch (service) {
      case 'device':
        return deviceService(this.o.surface, action, body, info);
      case 'media':
        return media1(this.o.surface, action, body, info);
      case 'media2':
        return media2(this.o.surface, action, body, info);
      case 'imaging':
        return imagingService(action, body);
      case 'events': {
        if (!this.o.events) throw faults.actionNotSupported(action);
        // A PullMessages held open ends when its client goes away or the server stops.
        const gone = new AbortController();
        res.once('close', () => gone.abort(new Error('the client went away')));
        return this.o.events.handle(action, body, path, AbortSignal.any([gone.signal, this.closing.signal]), info);
      }
      default:
        throw faults.actionNotSupported(action);
    }
  }

  private async snapshot(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET');
      return this.refuseAndClose(req, res, new SoapFault('Sender', 'ter:ActionNotSupported', 'the snapshot is fetched with GET', 405));
    }
    try {
      this.o.auth.checkHttp({ authorization: req.headers.authorization, method: req.method, url: req.url ?? PATHS.snapshot });
    } catch (err) {
      // Refused on its headers: whatever body it sends is not waited for.
      return this.refuseAndClose(req, res, err as SoapFault);
    }
    req.resume();
    const gone = new AbortController();
    res.once('close', () => gone.abort(new Error('the client went away')));
    try {
      const jpeg = await this.o.snapshot.take(AbortSignal.any([gone.signal, this.closing.signal]));
      res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': jpeg.length, 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : jpeg);
    } catch (err) {
      if (res.destroyed) return;
      const status = err instanceof SnapshotUnavailable ? err.status : 503;
      this.fault(res, new SoapFault('Receiver', 'ter:Action', `no snapshot: ${toLookoutError(err).message}`, status));
    }
  }

  private fault(res: ServerResponse, fault: SoapFault): void {
    if (res.headersSent || res.destroyed) return;
    const headers: Record<string, string> = {};
    if (fault instanceof AuthFault) {
      const challenge = this.o.auth.challenge(fault.stale);
      if (challenge) headers['WWW-Authenticate'] = challenge;
    }
    sendXml(res, fault.status, headers, soapFaultEnvelope(fault));
  }
}

/** Every SOAP answer with its Content-Length: libonvif's onvif-util cannot read a chunked reply. */
function sendXml(res: ServerResponse, status: number, headers: Record<string, string>, xml: string): void {
  const body = Buffer.from(xml, 'utf8');
  res.writeHead(status, { 'Content-Type': SOAP_CONTENT_TYPE, ...headers, 'Content-Length': String(body.length) });
  res.end(body);
}

/** The address this client reached the device at: every URI handed back uses it. */
function requestInfo(req: IncomingMessage, user: string): RequestInfo {
  const local = unmapIpv4(req.socket.localAddress ?? '127.0.0.1');
  const info: RequestInfo = { host: local.includes(':') ? `[${local}]` : local, client: `${user}@${unmapIpv4(req.socket.remoteAddress ?? '')}` };
  if ((req.socket as Partial<TLSSocket>).encrypted === true) info.secure = true;
  return info;
}
