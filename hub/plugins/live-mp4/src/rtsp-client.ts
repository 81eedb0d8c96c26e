import { connect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { deviceTlsRefusalOf } from 'lookout/lib/tls';
import { LookoutError } from 'lookout/core';
import { digestAuthorization, parseDigestChallenge } from 'lookout/lib/auth';
import { RTSP_FAILED, rtspFailure } from './rtsp-failure.js';

export interface RtspResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface RtspPlayOptions {
  /** `rtsp://host:port/path` or `rtsps://…`, without credentials (they are never put in a URL). */
  url: string;
  /** For rtsps://: how to verify the camera (the fleet CA and its pinned certificate: core's deviceTlsOptions). */
  tls?: ConnectionOptions;
  user?: string;
  password?: string;
  timeoutMs: number;
  /**
   * The session description, as soon as DESCRIBE answers: before PLAY, so before the first RTP
   * packet (the camera sends its latest GOP at once after the PLAY answer, in the same read).
   */
  onDescribe?(sdp: string): void;
  /** Each RTP packet of the video track (interleaved channel 0). */
  onRtp(packet: Buffer): void;
  /** Each RTCP sender report of the video track (channel 1): the camera's wall clock beside its RTP clock. */
  onSenderReport?(report: SenderReport): void;
  /** The stream ended after PLAY (a failure before it rejects rtspPlay instead). */
  onClose(error: Error | undefined): void;
}

export interface SenderReport {
  /** The sender's wall-clock time (its NTP timestamp) in Unix milliseconds. */
  wallMs: number;
  /** The RTP time of the same instant. */
  rtpTime: number;
}

/** Seconds from NTP's epoch (1900) to Unix's (1970). */
const NTP_UNIX_OFFSET_S = 2_208_988_800;

/** The sender report of an RTCP compound packet (RFC 3550 6.4.1), if it starts with one. */
export function senderReportOf(packet: Buffer): SenderReport | undefined {
  if (packet.length < 28 || packet[0] >> 6 !== 2 || packet[1] !== 200) return undefined;
  const wallMs = (packet.readUInt32BE(8) - NTP_UNIX_OFFSET_S) * 1000 + (packet.readUInt32BE(12) / 2 ** 32) * 1000;
  return { wallMs, rtpTime: packet.readUInt32BE(16) };
}

export interface RtspPlaying {
  sdp: string;
  close(): void;
}

const KEEPALIVE_MS = 20_000;
const MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * A minimal RTSP/1.0 client (RFC 2326) for one H.264 preview: DESCRIBE (Digest sign-in when asked),
 * SETUP with RTP interleaved on the same TCP connection, PLAY, and GET_PARAMETER as a keep-alive.
 * The hub reads the stream itself so that the camera's password goes in a header, never into a
 * command line (ffmpeg takes RTSP credentials only in its URL argument).
 */
export async function rtspPlay(o: RtspPlayOptions): Promise<RtspPlaying> {
  const target = new URL(o.url);
  const socket = await open(target, o.timeoutMs, o.tls);
  const conn = new RtspConnection(socket, o);
  try {
    const describe = await conn.request('DESCRIBE', o.url, { Accept: 'application/sdp' });
    const sdp = describe.body.toString('utf8');
    o.onDescribe?.(sdp);
    const base = describe.headers['content-base'] ?? `${o.url}/`;
    const control = /^a=control:(.+)$/m.exec(sdp.split(/^m=/m)[1] ?? '')?.[1]?.trim() ?? '';
    const trackUrl = /^rtsps?:\/\//i.test(control) ? control : new URL(control, base.endsWith('/') ? base : `${base}/`).toString();
    const setup = await conn.request('SETUP', trackUrl, { Transport: 'RTP/AVP/TCP;unicast;interleaved=0-1' });
    conn.session = setup.headers.session?.split(';')[0]?.trim();
    if (!conn.session) throw new LookoutError('live_stream_unavailable', `the camera's SETUP answer has no Session header`);
    await conn.request('PLAY', o.url, { Range: 'npt=0.000-' });
    conn.startKeepalive(o.url);
    // From here on the caller hears of the end; before, the failed request says why.
    conn.playing = true;
    return { sdp, close: () => conn.close() };
  } catch (err) {
    conn.close();
    throw err;
  }
}

/** RTSPS's registered port (RTSP's is 554). */
const RTSPS_PORT = 322;

function open(target: URL, timeoutMs: number, tls: ConnectionOptions | undefined): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const secure = target.protocol === 'rtsps:';
    const socket = secure ? tlsConnect({ host, port: Number(target.port || RTSPS_PORT), ...tls }) : connect({ host, port: Number(target.port || 554) });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new LookoutError('device_unreachable', `no RTSP connection to ${target.host} within ${timeoutMs} ms`, { details: { cause: 'timeout' } }));
    }, timeoutMs);
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.setNoDelay(true);
      resolve(socket);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const refused = secure ? deviceTlsRefusalOf(err) : undefined;
      if (refused) {
        reject(
          new LookoutError('device_tls_mismatch', `the camera's RTSPS certificate is refused: ${refused.message}`, {
            details: { reason: refused.reason, ...(refused.presented ? { presented: refused.presented } : {}) },
          }),
        );
        return;
      }
      reject(new LookoutError('device_unreachable', `RTSP connection to ${target.host} failed: ${err.message}`, { details: { cause: err.code ?? 'error' } }));
    });
  });
}

class RtspConnection {
  session: string | undefined;
  playing = false;
  private cseq = 0;
  private nc = 0;
  private challenge: Record<string, string> | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: { resolve: (r: RtspResponse) => void; reject: (e: Error) => void; timer: NodeJS.Timeout } | undefined;
  private keepalive: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly o: RtspPlayOptions,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.end(rtspFailure(err, "the camera's RTSP connection failed")));
    socket.on('close', () => this.end(undefined));
  }

  /** Sends a request; a 401 with a Digest challenge is answered once with the credentials. */
  async request(method: string, url: string, headers: Record<string, string>): Promise<RtspResponse> {
    let res = await this.send(method, url, headers);
    if (res.status === 401 && this.o.password !== undefined) {
      this.challenge = parseDigestChallenge(res.headers['www-authenticate'] ?? '');
      if (this.challenge) res = await this.send(method, url, headers);
    }
    if (res.status !== 200) {
      // 404: the camera serves no H.264 preview (no live video here); any other refusal (453 at its
      // session cap, 503 before its first keyframe, 5xx) is the device failing the request.
      const code = res.status === 401 ? 'device_auth_refused' : res.status === 404 ? 'live_stream_unavailable' : RTSP_FAILED;
      throw new LookoutError(
        code,
        `the camera answered ${method} with ${res.status}${res.status === 401 ? ' (its RTSP credentials: LOOKOUT_LIVE_RTSP_USER, LOOKOUT_LIVE_RTSP_PASSWORD)' : ''}`,
        {
          details: { method, status: res.status },
        },
      );
    }
    return res;
  }

  startKeepalive(url: string): void {
    this.keepalive = setInterval(() => {
      this.send('GET_PARAMETER', url, {}).catch(() => undefined);
    }, KEEPALIVE_MS);
  }

  close(): void {
    if (this.closed) return;
    if (this.session && !this.socket.destroyed) {
      this.socket.write(this.format('TEARDOWN', this.o.url, {}));
      this.socket.end();
    }
    this.end(undefined);
  }

  private send(method: string, url: string, headers: Record<string, string>): Promise<RtspResponse> {
    if (this.closed) return Promise.reject(new LookoutError('live_stream_unavailable', 'the RTSP connection is closed'));
    if (this.pending) return Promise.reject(new LookoutError('live_stream_unavailable', 'an RTSP request is already waiting'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        reject(new LookoutError(RTSP_FAILED, `the camera did not answer ${method} within ${this.o.timeoutMs} ms`, { details: { method, cause: 'timeout' } }));
        this.close();
      }, this.o.timeoutMs);
      this.pending = { resolve, reject, timer };
      this.socket.write(this.format(method, url, headers));
    });
  }

  private format(method: string, url: string, headers: Record<string, string>): string {
    const all: Record<string, string> = { CSeq: String(++this.cseq), 'User-Agent': 'lookout-hub', ...headers };
    if (this.session) all.Session = this.session;
    if (this.challenge && this.o.password !== undefined) {
      all.Authorization = digestAuthorization(this.challenge, this.o.user ?? 'admin', this.o.password, method, url, ++this.nc);
    }
    return `${method} ${url} RTSP/1.0\r\n${Object.entries(all)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n`;
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.buffer.length === 0) return;
      if (this.buffer[0] === 0x24) {
        // `$`, channel, 16-bit length: an interleaved RTP (even channel) or RTCP (odd) packet.
        if (this.buffer.length < 4) return;
        const length = this.buffer.readUInt16BE(2);
        if (this.buffer.length < 4 + length) return;
        const channel = this.buffer[1];
        const packet = this.buffer.subarray(4, 4 + length);
        this.buffer = this.buffer.subarray(4 + length);
        if (channel === 0) this.o.onRtp(packet);
        else if (channel === 1 && this.o.onSenderReport) {
          const report = senderReportOf(packet);
          if (report) this.o.onSenderReport(report);
        }
        continue;
      }
      const headEnd = this.buffer.indexOf('\r\n\r\n');
      if (headEnd < 0) {
        if (this.buffer.length > MAX_MESSAGE_BYTES) this.end(new LookoutError('live_stream_unavailable', 'the camera sent an RTSP message too large'));
        return;
      }
      const head = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (!Number.isSafeInteger(length) || length < 0 || length > MAX_MESSAGE_BYTES) {
        this.end(new LookoutError('live_stream_unavailable', 'the camera sent a bad RTSP Content-Length'));
        return;
      }
      if (this.buffer.length < headEnd + 4 + length) return;
      const body = Buffer.from(this.buffer.subarray(headEnd + 4, headEnd + 4 + length));
      this.buffer = this.buffer.subarray(headEnd + 4 + length);
      const status = Number(/^RTSP\/1\.0 (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
      const pending = this.pending;
      this.pending = undefined;
      if (pending) {
        clearTimeout(pending.timer);
        pending.resolve({ status, headers, body });
      }
    }
  }

  private end(error: Error | undefined): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    if (this.pending) {
      clearTimeout(this.pending.timer);
      this.pending.reject(error ?? new LookoutError(RTSP_FAILED, 'the camera closed the RTSP connection', { details: { cause: 'closed' } }));
      this.pending = undefined;
    }
    this.socket.destroy();
    if (this.playing) this.o.onClose(error);
  }
}
