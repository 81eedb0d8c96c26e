/**
 * RTSPS beside RTSP on a device process (real ffmpeg/ffprobe, real sockets on 127.0.0.1): the same
 * stream and Digest sign-in over TLS with the device certificate of a fleet CA the test makes, RTP
 * interleaved only (a UDP SETUP gets 461), plain RTSP unchanged, and a stranger's half-open TLS
 * socket closed at the handshake limit.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../support/fleet-certs.js';

const USER = 'viewer';
const PASSWORD = 'rtsps-secret-1';
const HANDSHAKE_MS = 1000;

let scratch: string;
let fleet: TestFleetCerts;
let foreign: TestFleetCerts;
let broker: EmbeddedBroker;
let device: DeviceProcess;
let rtspPort: number;
let rtspsPort: number;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'lookout-rtsps-'));
  const dataDir = join(scratch, 'device');
  fleet = await provisionTestFleetCerts(join(scratch, 'ca'), { devices: [{ id: 'cam-rtsps', dataRoot: dataDir, ips: ['127.0.0.1'] }] });
  foreign = await provisionTestFleetCerts(join(scratch, 'other-ca'), { devices: [{ id: 'cam-other', dataRoot: join(scratch, 'other'), ips: ['127.0.0.1'] }] });
  broker = await EmbeddedBroker.start({ port: 0 });
  device = await startDeviceProcess({
    deviceId: 'cam-rtsps',
    dataDir,
    image: join(packageRoot(), 'test', 'fixtures', 'images', 'rtsp-camera.json'),
    mqtt: broker.url,
    env: {
      ENCODE_RESOLUTION: '320x240',
      ENCODE_FPS: '5',
      ENCODE_GOP: '5',
      ONVIF_USER: USER,
      ONVIF_PASSWORD: PASSWORD,
      RTSPS: 'on',
      RTSPS_HANDSHAKE_TIMEOUT_MS: String(HANDSHAKE_MS),
      // Long, so that a socket closed before it is closed by the handshake limit.
      RTSP_PRE_SESSION_TIMEOUT_MS: '60000',
    },
  });
  rtspPort = device.ready.ports.rtsp;
  rtspsPort = device.ready.ports.rtsps;
  assert.ok(typeof rtspsPort === 'number' && rtspsPort > 0 && rtspsPort !== rtspPort, `ready line ports: ${JSON.stringify(device.ready.ports)}`);
});

after(async () => {
  const exit = await device?.stop();
  await broker?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  assert.equal(exit?.code, 0, device?.logs().slice(-2000));
});

function run(program: string, args: string[], timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(program, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function probe(url: string, extra: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return run('ffprobe', ['-v', 'error', ...extra, '-show_entries', 'stream=codec_name,width,height', '-of', 'csv=p=0', url]);
}

const rtsps = (path: string, password = PASSWORD) => `rtsps://${USER}:${password}@127.0.0.1:${rtspsPort}${path}`;

test('ffprobe reads /preview and /preview_h264 over RTSPS; plain RTSP still serves beside it', async () => {
  for (const [path, want] of [
    ['/preview', 'hevc,320,240'],
    ['/preview_h264', 'h264,320,240'],
  ] as const) {
    const r = await probe(rtsps(path));
    assert.equal(r.code, 0, `ffprobe rtsps ${path}: ${r.stderr}`);
    assert.equal(r.stdout.trim(), want);
  }
  // Longer than the handshake limit: a connection whose handshake is done is not closed by it.
  const read = await run('ffprobe', ['-v', 'error', '-read_intervals', '%+3', '-show_entries', 'packet=pts', '-of', 'csv=p=0', rtsps('/preview')]);
  assert.equal(read.code, 0, read.stderr);
  assert.ok(read.stdout.trim().split('\n').length >= 10, `3 s at 5 fps: ${read.stdout.trim().split('\n').length} packets`);
  const plain = await probe(`rtsp://${USER}:${PASSWORD}@127.0.0.1:${rtspPort}/preview`, ['-rtsp_transport', 'udp']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stdout.trim(), 'hevc,320,240');
});

test('RTSPS serves the device certificate of the fleet CA, and asks Digest as RTSP does', async () => {
  const socket = await openTls();
  const served = new X509Certificate(socket.getPeerX509Certificate()?.raw ?? Buffer.alloc(0));
  assert.ok(served.verify(new X509Certificate(fleet.caCertPem).publicKey), 'signed by the fleet CA');
  assert.equal(served.fingerprint256, new X509Certificate(readFileSync(fleet.device('cam-rtsps').certPath)).fingerprint256);
  assert.ok(!served.verify(new X509Certificate(foreign.caCertPem).publicKey), 'not by another CA');
  await assert.rejects(openTls(foreign.caCertPem), /self.signed|unable to verify|certificate/i, 'a client trusting another CA refuses it');
  const client = new TlsRtsp(socket);
  const denied = await client.request('DESCRIBE', rtsps('/preview').replace(`${USER}:${PASSWORD}@`, ''), {});
  assert.equal(denied.status, 401);
  assert.match(denied.headers.get('www-authenticate') ?? '', /^Digest /);
  const wrong = await probe(rtsps('/preview', 'not-the-password'));
  assert.notEqual(wrong.code, 0, 'a wrong password is refused over RTSPS too');
  socket.destroy();
});

test('a SETUP asking RTP over UDP on RTSPS gets 461; interleaved TCP on the same connection gets 200', async () => {
  const socket = await openTls();
  const client = new TlsRtsp(socket);
  const url = `rtsps://127.0.0.1:${rtspsPort}/preview`;
  const described = await client.signed('DESCRIBE', url, { Accept: 'application/sdp' });
  assert.equal(described.status, 200);
  assert.equal(described.headers.get('content-base'), `${url}/`, 'the base keeps the rtsps scheme');
  const track = `${url}/trackID=0`;
  const udp = await client.signed('SETUP', track, { Transport: 'RTP/AVP;unicast;client_port=40000-40001' });
  assert.equal(udp.status, 461);
  const tcp = await client.signed('SETUP', track, { Transport: 'RTP/AVP;unicast;client_port=40000-40001,RTP/AVP/TCP;unicast;interleaved=0-1' });
  assert.equal(tcp.status, 200);
  assert.match(tcp.headers.get('transport') ?? '', /^RTP\/AVP\/TCP;unicast;interleaved=0-1/);
  const plainScheme = await client.signed('DESCRIBE', `rtsp://127.0.0.1:${rtspsPort}/preview`, {});
  assert.equal(plainScheme.status, 404, 'an rtsp:// URL on the RTSPS port names nothing');
  socket.destroy();
});

test('a half-open socket on the RTSPS port (no handshake) is closed at the handshake limit, not the pre-session one', async () => {
  const started = Date.now();
  const closed = await new Promise<boolean>((resolve) => {
    const socket = netConnect(rtspsPort, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(true));
    // The pre-session limit is 60 s: a close well before it is the handshake limit's.
    setTimeout(() => resolve(false), 30_000).unref();
  });
  assert.ok(closed, 'closed by the server');
  assert.ok(Date.now() - started >= HANDSHAKE_MS - 100, 'not before the limit');
  const closedByLimit = device.logs().match(/RTSPS connection closed: no TLS handshake within the limit/g) ?? [];
  assert.equal(closedByLimit.length, 1, 'only the half-open socket, none of the clients that finished their handshake');
});

test('SIGHUP serves a renewed certificate to new RTSPS connections without a restart', async () => {
  const mine = fleet.device('cam-rtsps');
  const renewed = foreign.device('cam-other');
  copyFileSync(renewed.keyPath, mine.keyPath);
  copyFileSync(renewed.certPath, mine.certPath);
  const want = new X509Certificate(readFileSync(renewed.certPath)).fingerprint256;
  device.child.kill('SIGHUP');
  let seen = '';
  for (let i = 0; i < 100 && seen !== want; i++) {
    const socket = await openTls([fleet.caCertPem, foreign.caCertPem]);
    seen = new X509Certificate(socket.getPeerX509Certificate()?.raw ?? Buffer.alloc(0)).fingerprint256;
    socket.destroy();
    if (seen !== want) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(seen, want);
  const r = await probe(rtsps('/preview'));
  assert.equal(r.code, 0, `ffprobe after the reload: ${r.stderr}`);
});

function openTls(ca: string | string[] = fleet.caCertPem): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ port: rtspsPort, host: '127.0.0.1', ca }, () => resolve(socket));
    socket.once('error', reject);
  });
}

interface Reply {
  status: number;
  headers: Map<string, string>;
}

/** A bare RTSP client on a TLS socket: one request at a time, Digest (no qop) when asked. */
class TlsRtsp {
  private buf = '';
  private cseq = 0;
  private challenge: { realm: string; nonce: string } | undefined;
  private waiter: (() => void) | undefined;

  constructor(private readonly socket: TLSSocket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buf += d;
      this.waiter?.();
    });
  }

  async signed(method: string, url: string, headers: Record<string, string>): Promise<Reply> {
    if (!this.challenge) {
      const first = await this.request(method, url, headers);
      if (first.status !== 401) return first;
      const www = first.headers.get('www-authenticate') ?? '';
      this.challenge = { realm: /realm="([^"]*)"/.exec(www)?.[1] ?? '', nonce: /nonce="([^"]*)"/.exec(www)?.[1] ?? '' };
    }
    const { realm, nonce } = this.challenge;
    const md5 = (s: string) => createHash('md5').update(s).digest('hex');
    const response = md5(`${md5(`${USER}:${realm}:${PASSWORD}`)}:${nonce}:${md5(`${method}:${url}`)}`);
    const authorization = `Digest username="${USER}", realm="${realm}", nonce="${nonce}", uri="${url}", response="${response}"`;
    return this.request(method, url, { ...headers, Authorization: authorization });
  }

  async request(method: string, url: string, headers: Record<string, string>): Promise<Reply> {
    const lines = [`${method} ${url} RTSP/1.0`, `CSeq: ${++this.cseq}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.socket.write(lines.join('\r\n') + '\r\n\r\n');
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.buf.slice(0, end).split('\r\n');
        const headers = new Map(head.slice(1).map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers.get('content-length') ?? 0);
        if (this.buf.length >= end + 4 + length) {
          this.buf = this.buf.slice(end + 4 + length);
          return { status: Number(head[0].split(' ')[1]), headers };
        }
      }
      if (this.socket.destroyed) throw new Error('connection closed');
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }
}
