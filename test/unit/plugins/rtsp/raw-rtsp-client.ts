import { connect, type Socket } from 'node:net';

export interface RtspReply {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/**
 * A bare RTSP client over TCP (interleaved RTP): OPTIONS, DESCRIBE, SETUP and PLAY on one
 * connection, then it counts the interleaved bytes it reads until closed. No decoding, no probing:
 * one viewer for a few seconds at almost no CPU.
 */
export class RawRtspViewer {
  private buf = Buffer.alloc(0);
  private cseq = 0;
  private waiter: (() => void) | undefined;
  private playing = false;
  private closed = false;
  /** Resolves once the server (or close()) ended the connection. */
  readonly ended: Promise<void>;
  private onEnded: () => void = () => undefined;
  /** Interleaved bytes received since PLAY. */
  rtpBytes = 0;

  private constructor(private readonly socket: Socket) {
    this.ended = new Promise((resolve) => (this.onEnded = resolve));
    socket.on('data', (chunk: Buffer) => {
      if (this.playing) this.rtpBytes += chunk.length;
      else this.buf = Buffer.concat([this.buf, chunk]);
      this.waiter?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
      this.onEnded();
    });
    socket.on('error', () => undefined);
  }

  /** `localAddress`: another 127.x address to connect from (the server sees another client address). */
  static open(port: number, host = '127.0.0.1', localAddress?: string): Promise<RawRtspViewer> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host, ...(localAddress ? { localAddress } : {}) }, () => {
        socket.off('error', reject);
        resolve(new RawRtspViewer(socket));
      });
      socket.once('error', reject);
    });
  }

  /** DESCRIBE, SETUP (TCP interleaved 0-1), PLAY on `url`: resolves once playing. */
  async play(url: string, timeoutMs = 15_000): Promise<void> {
    const describe = await this.request('DESCRIBE', url, { Accept: 'application/sdp' }, timeoutMs);
    if (describe.status !== 200) throw new Error(`DESCRIBE ${describe.status}`);
    const base = describe.headers.get('content-base') ?? `${url}/`;
    const setup = await this.request('SETUP', `${base}trackID=0`, { Transport: 'RTP/AVP/TCP;unicast;interleaved=0-1' }, timeoutMs);
    if (setup.status !== 200) throw new Error(`SETUP ${setup.status}`);
    const session = (setup.headers.get('session') ?? '').split(';')[0];
    const play = await this.request('PLAY', url, { Session: session, Range: 'npt=0.000-' }, timeoutMs, true);
    if (play.status !== 200) throw new Error(`PLAY ${play.status}`);
  }

  close(): void {
    this.socket.destroy();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async request(method: string, url: string, headers: Record<string, string>, timeoutMs: number, thenPlay = false): Promise<RtspReply> {
    const lines = [`${method} ${url} RTSP/1.0`, `CSeq: ${++this.cseq}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.socket.write(lines.join('\r\n') + '\r\n\r\n');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = this.take();
      if (reply) {
        if (thenPlay) {
          // Whatever followed the PLAY reply is already RTP.
          this.playing = true;
          this.rtpBytes += this.buf.length;
          this.buf = Buffer.alloc(0);
        }
        return reply;
      }
      if (this.closed) throw new Error(`${method}: the connection closed`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${method}: no reply within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = undefined;
    }
  }

  /** One whole reply off the front of the buffer, if there is one. */
  private take(): RtspReply | undefined {
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const head = this.buf.subarray(0, end).toString('latin1').split('\r\n');
    const headers = new Map<string, string>();
    for (const line of head.slice(1)) {
      const i = line.indexOf(':');
      if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
    }
    const length = Number(headers.get('content-length') ?? 0);
    if (this.buf.length < end + 4 + length) return undefined;
    const body = this.buf.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buf = this.buf.subarray(end + 4 + length);
    const status = Number(/^RTSP\/1\.0 (\d{3})/.exec(head[0])?.[1] ?? 0);
    return { status, headers, body };
  }
}
