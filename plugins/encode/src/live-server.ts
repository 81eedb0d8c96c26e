import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { LookoutError, type Logger } from 'lookout/core';
import { reloadOnSighup, SERVED_TLS_CONTEXT, servedPairAtStart } from 'lookout/lib/tls';
import type { LiveRefusal } from './live-access.js';
import type { EncodedPicture, EncodedVideo } from './service.js';

export const LIVE_PATH = '/live.h265';

export interface LiveServerOptions {
  host: string;
  port: number;
  maxClients: number;
  /** Bytes a client may lag behind (unsent in its socket) before it is dropped. */
  maxBufferBytes: number;
  guard: (req: IncomingMessage) => LiveRefusal | undefined;
  /**
   * HTTPS with the device certificate (read at listen, refused there when missing or unfit; read
   * again on SIGHUP, as the tool server does, unless `reloadOnSighup` is false).
   */
  tls?: { certPath: string; keyPath: string; reloadOnSighup?: boolean };
  /** How long a TLS handshake may take before the socket is dropped (a stranger's half-open handshake holds nothing longer). */
  handshakeTimeoutMs?: number;
  log?: Pick<Logger, 'info' | 'warn'>;
}

/**
 * GET /live.h265: the encoder's stream as chunked H.265 Annex B, starting with the latest GOP so a
 * decoder shows a picture at once, then every new picture. A bounded number of clients; a client
 * that reads slower than the stream is cut off instead of growing our memory.
 */
export class LiveServer {
  private http: Server | HttpsServer | undefined;
  private stopReload: (() => void) | undefined;
  private readonly clients = new Set<ServerResponse>();
  private slowDropped = 0;

  constructor(
    private readonly video: EncodedVideo,
    private readonly o: LiveServerOptions,
  ) {}

  /** `https` when it serves TLS. */
  get scheme(): 'http' | 'https' {
    return this.o.tls ? 'https' : 'http';
  }

  async listen(): Promise<number> {
    const onRequest = (req: IncomingMessage, res: ServerResponse): void => this.handle(req, res);
    const tls = this.o.tls;
    let http: Server | HttpsServer;
    if (tls) {
      const pair = await servedPairAtStart(tls.certPath, tls.keyPath, 'the live stream', 'LIVE_TLS');
      const https = createHttpsServer(
        { cert: pair.cert, key: pair.key, ...SERVED_TLS_CONTEXT, handshakeTimeout: this.o.handshakeTimeoutMs ?? 10_000 },
        onRequest,
      );
      https.on('tlsClientError', (_err, socket) => socket.destroy());
      if (tls.reloadOnSighup !== false) {
        this.stopReload = reloadOnSighup(https, tls, pair, this.o.log ?? { info: () => undefined, warn: () => undefined }, 'live stream');
      }
      http = https;
    } else {
      http = createServer(onRequest);
    }
    http.on('clientError', (_err, socket) => socket.destroy());
    this.http = http;
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(this.o.port, this.o.host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    return (http.address() as AddressInfo).port;
  }

  stats(): { clients: number; slow_dropped: number } {
    return { clients: this.clients.size, slow_dropped: this.slowDropped };
  }

  async close(): Promise<void> {
    this.stopReload?.();
    for (const res of this.clients) res.destroy();
    const http = this.http;
    if (!http) return;
    await new Promise<void>((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0];
    if (path !== LIVE_PATH) return sendError(res, 404, new LookoutError('not_found', `no such path; the live stream is GET ${LIVE_PATH}`));
    if (req.method !== 'GET') return sendError(res, 405, new LookoutError('method_not_allowed', `${LIVE_PATH} answers GET`), { allow: 'GET' });
    const refusal = this.o.guard(req);
    if (refusal) return sendError(res, refusal.status, refusal.error, refusal.headers);
    if (this.clients.size >= this.o.maxClients) {
      return sendError(res, 503, new LookoutError('live_stream_unavailable', `the live stream serves ${this.o.maxClients} clients at once; retry later`), {
        'retry-after': '5',
      });
    }
    const gop = this.video.latestGop();
    if (gop.length === 0 && !this.video.running) {
      const exit = this.video.lastExit();
      const error = exit
        ? new LookoutError('encoder_unavailable', `the encoder is not running (it stopped at ${exit.at}: ${exit.message})`)
        : new LookoutError('live_stream_unavailable', 'the encoder has produced no picture yet');
      return sendError(res, 503, error, { 'retry-after': '5' });
    }
    this.serve(res, gop);
  }

  private serve(res: ServerResponse, gop: EncodedPicture[]): void {
    res.writeHead(200, { 'content-type': 'video/H265', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    res.flushHeaders();
    this.clients.add(res);
    // Before the first keyframe a decoder can do nothing with a picture: wait for one.
    let started = gop.length > 0;
    const send = (picture: EncodedPicture): void => {
      if (!started) {
        if (!picture.keyframe) return;
        started = true;
      }
      res.write(picture.data);
      if (res.writableLength > this.o.maxBufferBytes) {
        this.slowDropped++;
        this.o.log?.warn({ lagBytes: res.writableLength }, 'live client dropped: it reads slower than the stream');
        res.destroy();
      }
    };
    for (const picture of gop) send(picture);
    const off = this.video.subscribe(send);
    res.on('close', () => {
      off();
      this.clients.delete(res);
    });
  }
}

function sendError(res: ServerResponse, status: number, error: LookoutError, headers: Record<string, string> = {}): void {
  const text = JSON.stringify({ error: { code: error.code, message: error.message } });
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
