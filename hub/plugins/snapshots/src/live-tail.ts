import { request, type ClientRequest } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { deviceTlsRefusalOf } from 'lookout/lib/tls';
import { LookoutError } from 'lookout/core';
import { GopTail, type GopSnapshot } from './gop-tail.js';

export interface LiveTailOptions {
  deviceId: string;
  /** `http(s)://<device>:<live port>/live.h265` */
  url: string;
  /**
   * For an https url: the agent that trusts the fleet CA only and pins the device's certificate
   * (DeviceTlsAgents); a certificate it refuses fails the tail with device_tls_mismatch at once.
   */
  agent?: HttpsAgent;
  /** The fingerprint the agent pins (the tail is made again when the device announces another). */
  fingerprint?: string | null;
  /** Bearer token the device's live stream wants beyond loopback (its tool token). */
  token?: string;
  /** Bound on the kept GOP, and on bytes without a complete picture. */
  maxBytes: number;
  /** Reconnect delays: from the first, doubling up to the last. */
  backoffMinMs: number;
  backoffMaxMs: number;
  /** A connection that sends no byte for this long is dropped and made again. */
  stallMs: number;
  /** Each connection's first keyframe (`reconnected`: not the tail's first connection). */
  onWarm(reconnected: boolean): void;
}

type Waiter = { resolve: () => void; reject: (err: Error) => void };

/**
 * The hub's tail of one device's live H.265 stream (`GET /live.h265` on its `live` port, Annex B
 * from the latest GOP on): it keeps the current GOP in memory so a snapshot is one decode away,
 * reconnects with backoff while it is open, and is closed by its owner when idle.
 */
export class LiveTail {
  private gop: GopTail;
  /** The previous connection's GOP, kept until the new one has a keyframe (subject to the age check). */
  private previous: GopSnapshot | null = null;
  private req: ClientRequest | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  private delay: number;
  private connections = 0;
  private closed = false;
  private waiters: Waiter[] = [];
  /** Why the latest connection failed (null while streaming). */
  lastError: string | null = null;
  /** The latest connection's certificate was refused (null once a connection is accepted). */
  private refusal: LookoutError | null = null;

  constructor(private readonly options: LiveTailOptions) {
    this.delay = options.backoffMinMs;
    this.gop = new GopTail(options.maxBytes);
    this.connect();
  }

  get url(): string {
    return this.options.url;
  }

  get fingerprint(): string | null | undefined {
    return this.options.fingerprint;
  }

  get warm(): boolean {
    return this.gop.snapshot() !== null;
  }

  /** Resolves once the tail has a keyframe; rejects past `timeoutMs` with the connection's last failure. */
  ready(timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.warm) return Promise.resolve();
    if (this.closed) return Promise.reject(this.unavailable('the live tail is closed'));
    if (this.refusal) return Promise.reject(this.refusal);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => done(resolve),
        reject: (err) => done(() => reject(err)),
      };
      const timeout = setTimeout(
        () => waiter.reject(this.unavailable(`no keyframe from ${this.options.url} within ${timeoutMs} ms${this.lastError ? `: ${this.lastError}` : ''}`)),
        timeoutMs,
      );
      const onAbort = () => waiter.reject(this.unavailable('the request was cancelled'));
      signal.addEventListener('abort', onAbort, { once: true });
      const done = (then: () => void) => {
        clearTimeout(timeout);
        signal.removeEventListener('abort', onAbort);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        then();
      };
      this.waiters.push(waiter);
    });
  }

  /** The current GOP, or the previous connection's, if its newest picture is at most `maxAgeMs` old. */
  snapshot(maxAgeMs: number, now = Date.now()): GopSnapshot {
    const gop = this.gop.snapshot() ?? this.previous;
    if (!gop && this.refusal) throw this.refusal;
    if (!gop) throw this.unavailable(`the live tail has no keyframe yet${this.lastError ? ` (${this.lastError})` : ''}`);
    const age = now - gop.lastPictureAt;
    if (age > maxAgeMs) {
      throw this.unavailable(`the live tail's newest picture is ${age} ms old (more than ${maxAgeMs} ms)${this.lastError ? `: ${this.lastError}` : ''}`);
    }
    return gop;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.stallTimer);
    this.req?.destroy();
    for (const w of [...this.waiters]) w.reject(this.unavailable('the live tail was closed'));
  }

  private newGop(): GopTail {
    const reconnected = this.connections > 1;
    return new GopTail(this.options.maxBytes, () => {
      if (this.warmedThisConnection) return;
      this.warmedThisConnection = true;
      this.delay = this.options.backoffMinMs;
      this.lastError = null;
      this.refusal = null;
      this.options.onWarm(reconnected);
      for (const w of [...this.waiters]) w.resolve();
    });
  }

  private warmedThisConnection = false;

  private connect(): void {
    if (this.closed) return;
    this.connections++;
    const last = this.gop.snapshot();
    if (last) this.previous = last;
    this.warmedThisConnection = false;
    this.gop = this.newGop();
    const headers: Record<string, string> = { accept: 'video/H265' };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    const https = this.options.url.startsWith('https:');
    const req = https
      ? httpsRequest(this.options.url, { headers, ...(this.options.agent ? { agent: this.options.agent } : {}) })
      : request(this.options.url, { headers });
    this.req = req;
    const armStall = () => {
      clearTimeout(this.stallTimer);
      this.stallTimer = setTimeout(() => req.destroy(new Error(`no data for ${this.options.stallMs} ms`)), this.options.stallMs);
    };
    armStall();
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        req.destroy(new Error(`HTTP ${res.statusCode ?? '?'} from ${this.options.url}`));
        return;
      }
      res.on('data', (piece: Buffer) => {
        armStall();
        this.gop.push(piece);
        if (this.gop.bytesSincePicture > this.options.maxBytes) req.destroy(new Error(`no complete picture in ${this.options.maxBytes} bytes`));
      });
      res.on('end', () => this.retry(req, new Error('the device ended the live stream')));
      res.on('error', (err) => this.retry(req, err));
    });
    req.on('error', (err) => this.retry(req, err));
    req.end();
  }

  private retry(req: ClientRequest, err: Error): void {
    if (req !== this.req || this.closed) return;
    this.req = undefined;
    clearTimeout(this.stallTimer);
    req.destroy();
    this.lastError = err.message;
    const refused = deviceTlsRefusalOf(err);
    if (refused) {
      // Not a passing failure: whoever waits hears why now; the tail keeps retrying (a renewed certificate announced makes a new tail).
      this.refusal = new LookoutError('device_tls_mismatch', `${this.options.deviceId}: the live stream's certificate is refused: ${refused.message}`, {
        details: { device_id: this.options.deviceId, reason: refused.reason, ...(refused.presented ? { presented_fingerprint: refused.presented } : {}) },
      });
      this.lastError = this.refusal.message;
      for (const w of [...this.waiters]) w.reject(this.refusal);
    }
    const delay = this.delay;
    this.delay = Math.min(this.options.backoffMaxMs, this.delay * 2);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  private unavailable(message: string): LookoutError {
    return new LookoutError('live_stream_unavailable', `${this.options.deviceId}: ${message}`, { details: { device_id: this.options.deviceId } });
  }
}
