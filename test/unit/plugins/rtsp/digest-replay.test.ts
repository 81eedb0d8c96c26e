import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { parseDigestHeader } from '../../../../lib/auth/http-digest-server.js';
import { DigestAuth, REALM } from '../../../../plugins/rtsp/src/digest-auth.js';
import { RtspServer } from '../../../../plugins/rtsp/src/rtsp-server.js';

/**
 * Digest answers captured on the wire must not open the stream for anybody else: the real RTSP
 * server on 127.0.0.1, its real Digest. No stream source is configured, so a request that passes
 * authentication answers 404 and one that does not answers 401.
 */
const USER = 'viewer';
const PASSWORD = 'rtsp-secret-1';
const md5 = (s: string): string => createHash('md5').update(s).digest('hex');

let server: RtspServer;
let port: number;

before(async () => {
  server = new RtspServer({
    host: '127.0.0.1',
    port: 0,
    sources: [],
    auth: new DigestAuth(USER, PASSWORD),
    maxSessions: 4,
    maxBufferBytes: 1 << 20,
    sessionTimeoutMs: 60_000,
    firstKeyframeWaitMs: 1000,
    maxConnectionsPerAddress: 8,
    preSessionTimeoutMs: 10_000,
  });
  port = await server.listen();
});

after(async () => {
  await server?.close();
});

/** One RTSP connection: requests answered in order, status and headers of each. */
class Conn {
  private buf = '';
  private cseq = 0;
  private wake: (() => void) | undefined;
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (s: string) => {
      this.buf += s;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }
  static open(): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => resolve(new Conn(s)));
      s.once('error', reject);
    });
  }
  async send(method: string, uri: string, authorization?: string): Promise<{ status: number; headers: Map<string, string> }> {
    const lines = [`${method} ${uri} RTSP/1.0`, `CSeq: ${++this.cseq}`, ...(authorization ? [`Authorization: ${authorization}`] : [])];
    this.socket.write(lines.join('\r\n') + '\r\n\r\n');
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.buf.slice(0, end).split('\r\n');
        const headers = new Map(head.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string]));
        this.buf = this.buf.slice(end + 4 + Number(headers.get('content-length') ?? 0));
        return { status: Number(head[0].split(' ')[1]), headers };
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
  /** The nonce of this connection's challenge. */
  async nonce(uri: string): Promise<string> {
    const r = await this.send('DESCRIBE', uri);
    assert.equal(r.status, 401);
    return parseDigestHeader(r.headers.get('www-authenticate') ?? '').nonce;
  }
  close(): void {
    this.socket.destroy();
  }
}

function answer(method: string, uri: string, nonce: string, qop?: { nc: number }): string {
  const ha1 = md5(`${USER}:${REALM}:${PASSWORD}`);
  const ha2 = md5(`${method}:${uri}`);
  const base = `Digest username="${USER}", realm="${REALM}", nonce="${nonce}", uri="${uri}"`;
  if (!qop) return `${base}, response="${md5(`${ha1}:${nonce}:${ha2}`)}"`;
  const nc = qop.nc.toString(16).padStart(8, '0');
  return `${base}, qop=auth, nc=${nc}, cnonce="c0ffee", response="${md5(`${ha1}:${nonce}:${nc}:c0ffee:auth:${ha2}`)}"`;
}

test('RTSP Digest: an answer is good on its own connection and refused on another one', async () => {
  const uri = `rtsp://127.0.0.1:${port}/preview`;
  const a = await Conn.open();
  const b = await Conn.open();
  const header = answer('DESCRIBE', uri, await a.nonce(uri));
  assert.equal((await a.send('DESCRIBE', uri, header)).status, 404, 'the right answer passes on the connection that was challenged');
  const replayed = await b.send('DESCRIBE', uri, header);
  assert.equal(replayed.status, 401, 'the same header on another connection is refused');
  assert.match(replayed.headers.get('www-authenticate') ?? '', /^Digest realm=/);
  a.close();
  b.close();
});

test('RTSP Digest: an answer for one URI is refused for another; the digested uri must be the request target', async () => {
  const uri = `rtsp://127.0.0.1:${port}/preview`;
  const c = await Conn.open();
  const nonce = await c.nonce(uri);
  assert.equal((await c.send('DESCRIBE', `rtsp://127.0.0.1:${port}/preview_h264`, answer('DESCRIBE', uri, nonce))).status, 401);
  // Computed for the other URI but claiming this one.
  const forged = answer('DESCRIBE', `rtsp://127.0.0.1:${port}/other`, nonce).replace(/uri="[^"]+"/, `uri="${uri}"`);
  assert.equal((await c.send('DESCRIBE', uri, forged)).status, 401);
  assert.equal((await c.send('DESCRIBE', uri, answer('DESCRIBE', uri, nonce))).status, 404);
  c.close();
});

test('RTSP Digest with qop=auth: the nonce count must increase; a repeated or lower nc is refused', async () => {
  const uri = `rtsp://127.0.0.1:${port}/preview`;
  const c = await Conn.open();
  const nonce = await c.nonce(uri);
  assert.equal((await c.send('DESCRIBE', uri, answer('DESCRIBE', uri, nonce, { nc: 1 }))).status, 404);
  assert.equal((await c.send('DESCRIBE', uri, answer('DESCRIBE', uri, nonce, { nc: 1 }))).status, 401, 'the same nc again');
  assert.equal((await c.send('DESCRIBE', uri, answer('DESCRIBE', uri, nonce, { nc: 3 }))).status, 404);
  assert.equal((await c.send('DESCRIBE', uri, answer('DESCRIBE', uri, nonce, { nc: 2 }))).status, 401, 'a lower nc');
  c.close();
});
