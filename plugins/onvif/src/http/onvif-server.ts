import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Element } from '@xmldom/xmldom';
import { isLoopbackHostHeader, toLookoutError, unmapIpv4, type Logger } from 'lookout/core';
import { AuthFault, type OnvifAuth } from '../auth/onvif-auth.js';
import { deviceService } from '../device/device-service.js';
import { media1 } from '../media/media1-service.js';
import { media2 } from '../media/media2-service.js';
import { NS } from '../soap/namespaces.js';
import { faults, SoapFault } from '../soap/soap-fault.js';
import { parseSoapRequest } from '../soap/soap-request.js';
import { SOAP_CONTENT_TYPE, soapEnvelope, soapFaultEnvelope } from '../soap/soap-response.js';
import { PATHS, type OnvifSurface, type RequestInfo } from '../surface.js';
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
  maxBodyBytes: number;
  log: Logger;
}

type Service = 'device' | 'media' | 'media2' | 'events';

const BY_NAMESPACE: Record<string, Service> = { [NS.tds]: 'device', [NS.trt]: 'media', [NS.tr2]: 'media2', [NS.tev]: 'events', [NS.wsnt]: 'events' };
const BY_PATH: Record<string, Service> = { [PATHS.device]: 'device', [PATHS.media]: 'media', [PATHS.media2]: 'media2', [PATHS.events]: 'events' };

class BodyTooLarge extends Error {}

/**
 * The ONVIF HTTP server: SOAP 1.2 over POST on the service paths, the snapshot over GET. Every
 * failure is a SOAP fault in XML; a bad request never takes the server down.
 */
export class OnvifServer {
  private readonly server: Server;
  private readonly closing = new AbortController();

  constructor(private readonly o: OnvifServerOptions) {
    this.server = createServer((req, res) => {
      this.route(req, res).catch((err: unknown) => {
        o.log.error({ err: toLookoutError(err).message }, 'ONVIF request failed');
        if (!res.headersSent) this.fault(res, new SoapFault('Receiver', 'ter:Action', 'internal error', 500));
        else res.destroy();
      });
    });
    // Slow or stuck clients do not hold sockets forever (PullMessages holds up to its own timeout, well under this).
    this.server.requestTimeout = 0;
    this.server.headersTimeout = 15_000;
    this.server.keepAliveTimeout = 10_000;
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
      req.resume();
      return this.fault(
        res,
        new SoapFault('Sender', 'ter:NotAuthorized', 'Sender not authorized: this device has no ONVIF password and answers loopback names only', 403),
      );
    }
    if (path === PATHS.snapshot) return this.snapshot(req, res);
    const known = path in BY_PATH || path.startsWith(PATHS.subscription);
    if (!known) {
      req.resume();
      return this.fault(res, new SoapFault('Sender', 'ter:ActionNotSupported', `no ONVIF service at ${path}`, 404));
    }
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('Allow', 'POST');
      return this.fault(res, new SoapFault('Sender', 'ter:ActionNotSupported', `${req.method ?? ''} ${path}: SOAP requests are POSTed`, 405));
    }
    let text: string;
    try {
      text = await this.readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        res.setHeader('Connection', 'close');
        return this.fault(res, new SoapFault('Sender', 'ter:WellFormed', `the request is larger than ${this.o.maxBodyBytes} bytes`, 413));
      }
      return;
    }
    try {
      const request = parseSoapRequest(text);
      this.o.auth.checkSoap(request.action, request.header, { authorization: req.headers.authorization, method: req.method, url: req.url ?? path });
      const service = path.startsWith(PATHS.subscription) ? 'events' : (BY_NAMESPACE[request.namespace] ?? BY_PATH[path]);
      const info = requestInfo(req);
      const content = await this.dispatch(service, request.action, request.body, info, path, res);
      res.writeHead(200, { 'Content-Type': SOAP_CONTENT_TYPE });
      res.end(soapEnvelope(content));
    } catch (err) {
      if (err instanceof SoapFault) return this.fault(res, err);
      throw err;
    }
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
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET');
      return this.fault(res, new SoapFault('Sender', 'ter:ActionNotSupported', 'the snapshot is fetched with GET', 405));
    }
    try {
      this.o.auth.checkHttp({ authorization: req.headers.authorization, method: req.method, url: req.url ?? PATHS.snapshot });
    } catch (err) {
      return this.fault(res, err as SoapFault);
    }
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

  private readBody(req: IncomingMessage): Promise<string> {
    const max = this.o.maxBodyBytes;
    return new Promise((resolve, reject) => {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > max) {
        req.resume();
        return reject(new BodyTooLarge());
      }
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > max) {
          chunks.length = 0;
          req.removeAllListeners('data');
          req.resume();
          reject(new BodyTooLarge());
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });
  }

  private fault(res: ServerResponse, fault: SoapFault): void {
    if (res.headersSent || res.destroyed) return;
    const headers: Record<string, string> = { 'Content-Type': SOAP_CONTENT_TYPE };
    if (fault instanceof AuthFault) {
      const challenge = this.o.auth.challenge(fault.stale);
      if (challenge) headers['WWW-Authenticate'] = challenge;
    }
    res.writeHead(fault.status, headers);
    res.end(soapFaultEnvelope(fault));
  }
}

/** The address this client reached the device at: every URI handed back uses it. */
function requestInfo(req: IncomingMessage): RequestInfo {
  const local = unmapIpv4(req.socket.localAddress ?? '127.0.0.1');
  return { host: local.includes(':') ? `[${local}]` : local };
}
