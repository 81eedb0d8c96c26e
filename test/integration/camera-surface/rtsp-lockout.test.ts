/**
 * The RTSP server before login (issue 25, item 2): idle sockets from one address cannot lock the
 * other viewers out (a cap per address below the one in all), a connection without a session is
 * closed after the pre-session timeout (idle, slow, or done asking), and a session without a sign
 * of life ends at the timeout its Session header announces, while keep-alives (GET_PARAMETER,
 * OPTIONS) and a TCP viewer that reads keep theirs. A real lookout-edge device (simulated camera,
 * no credentials: loopback only), real ffmpeg; other 127.x source addresses stand for other hosts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { RawRtspViewer } from '../../unit/plugins/rtsp/raw-rtsp-client.js';

const FPS = 5;
const PRE_SESSION_MS = 1500;
const SESSION_TIMEOUT_S = 2;
/** The default connection cap in all: two per session (16) and eight more. */
const CAP = 2 * 16 + 8;
/** Generous bound for "is closed", far above the timeouts: a contract check, not a speed test. */
const CLOSE_WITHIN_MS = 30_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * `count` sockets from `localAddresses` (in turn) that send nothing, reopened whenever the server closes one
 * (what an attacker does): the pressure stays on for as long as the holder runs.
 */
class IdleHolder {
  connects = 0;
  private readonly sockets = new Set<Socket>();
  private stopped = false;

  constructor(
    private readonly port: number,
    private readonly localAddresses: string[],
    count: number,
  ) {
    for (let i = 0; i < count; i++) this.open(localAddresses[i % localAddresses.length]);
  }

  private open(localAddress: string): void {
    if (this.stopped) return;
    const socket = connect({ port: this.port, host: '127.0.0.1', localAddress }, () => this.connects++);
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.sockets.delete(socket);
      setTimeout(() => this.open(localAddress), 200);
    });
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.sockets) s.destroy();
  }
}

function run(program: string, args: string[], timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(program, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Resolves when the socket closes; fails the test if it is still open after `ms`. */
function closedWithin(socket: Socket, ms: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed) return resolve();
    const timer = setTimeout(() => reject(new Error(`${what}: still open after ${ms} ms`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function rawSocket(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.on('error', reject);
  });
}

describe('RTSP before a session: caps per address, pre-session and session timeouts', () => {
  let broker: EmbeddedBroker;
  let device: DeviceProcess;
  let port: number;
  let url: string;

  before(async () => {
    broker = await EmbeddedBroker.start({ port: 0 });
    device = await startDeviceProcess({
      deviceId: 'cam-rtsp-lockout',
      image: join(packageRoot(), 'test', 'fixtures', 'images', 'rtsp-camera.json'),
      mqtt: broker.url,
      env: {
        ENCODE_RESOLUTION: '320x240',
        ENCODE_FPS: String(FPS),
        ENCODE_GOP: '5',
        RTSP_H264: 'off',
        RTSP_PRE_SESSION_TIMEOUT_MS: String(PRE_SESSION_MS),
        RTSP_SESSION_TIMEOUT_S: String(SESSION_TIMEOUT_S),
      },
    });
    port = device.ready.ports.rtsp;
    assert.ok(typeof port === 'number' && port > 0, JSON.stringify(device.ready.ports));
    url = `rtsp://127.0.0.1:${port}/preview`;
  });

  after(async () => {
    const exit = await device?.stop();
    await broker?.close();
    assert.equal(exit?.code, 0, device?.logs().slice(-2000));
  });

  /** Holds the cap's worth of idle sockets from `addresses` while ffmpeg plays 2 s of the stream from 127.0.0.1. */
  const playWhileHeld = async (addresses: string[]): Promise<void> => {
    const holder = new IdleHolder(port, addresses, CAP);
    try {
      // Every one of them connected at least once: the cap's worth is there (or was refused) before the viewer comes.
      for (let i = 0; holder.connects < CAP; i++) {
        assert.ok(i < 600, `the holder connected ${holder.connects} of ${CAP}`);
        await sleep(50);
      }
      const r = await run('ffmpeg', ['-v', 'error', '-rtsp_transport', 'tcp', '-i', url, '-t', '2', '-f', 'framemd5', '-']);
      assert.equal(r.code, 0, `ffmpeg: ${r.stderr}`);
      const frames = r.stdout.split('\n').filter((l) => /^\d+,/.test(l)).length;
      // It plays: pictures decode. Not a rate: a loaded machine's encoder may give fewer than FPS a second.
      assert.ok(frames >= 2, `${frames} frames decoded from 2 s of the stream`);
    } finally {
      holder.stop();
    }
  };

  it(`with the cap's worth (${CAP}) of idle connections held from one address, a client from another address plays the stream`, async () => {
    await playWhileHeld(['127.0.0.2']);
  });

  it(`with every slot (${CAP}) held by idle connections from many addresses, a new client still plays (the oldest that never asked makes room)`, async () => {
    await playWhileHeld(Array.from({ length: 10 }, (_, i) => `127.0.2.${i + 1}`));
  });

  it('closes connections without a session after the pre-session timeout: idle, sending slowly, or done asking', async () => {
    const idle = await rawSocket(port, '127.0.0.3');
    const slow = await rawSocket(port, '127.0.0.3');
    // A request head that never ends: one byte at a time, well inside every size bound.
    slow.write('OPTIONS * RTSP/1.0\r\nCSeq: 1\r\nX-Slow: ');
    const drip = setInterval(() => slow.writable && slow.write('a'), 100);
    const asker = await RawRtspViewer.open(port, '127.0.0.1', '127.0.0.3');
    try {
      assert.equal((await asker.request('OPTIONS', url, {}, 10_000)).status, 200);
      assert.equal((await asker.request('DESCRIBE', url, { Accept: 'application/sdp' }, 20_000)).status, 200);
      await Promise.all([closedWithin(idle, CLOSE_WITHIN_MS, 'idle'), closedWithin(slow, CLOSE_WITHIN_MS, 'slow')]);
      await Promise.race([
        asker.ended,
        sleep(CLOSE_WITHIN_MS).then(() => assert.fail(`a connection that only asked is still open after ${CLOSE_WITHIN_MS} ms`)),
      ]);
    } finally {
      clearInterval(drip);
      idle.destroy();
      slow.destroy();
      asker.close();
    }
  });

  it('ends a session without a sign of life at its announced timeout, then its connection; keep-alives and a reading TCP viewer keep theirs', async () => {
    const setUp = async (viewer: RawRtspViewer): Promise<string> => {
      const describe = await viewer.request('DESCRIBE', url, { Accept: 'application/sdp' }, 20_000);
      assert.equal(describe.status, 200);
      const setup = await viewer.request('SETUP', `${url}/trackID=0`, { Transport: 'RTP/AVP/TCP;unicast;interleaved=0-1' }, 10_000);
      assert.equal(setup.status, 200);
      const session = setup.headers.get('session') ?? '';
      assert.match(session, new RegExp(`;timeout=${SESSION_TIMEOUT_S}$`));
      return session.split(';')[0];
    };
    const silent = await RawRtspViewer.open(port, '127.0.0.1', '127.0.0.4');
    const getParameter = await RawRtspViewer.open(port, '127.0.0.1', '127.0.0.4');
    const options = await RawRtspViewer.open(port, '127.0.0.1', '127.0.0.4');
    const reader = await RawRtspViewer.open(port, '127.0.0.1', '127.0.0.5');
    try {
      await setUp(silent);
      const a = await setUp(getParameter);
      const b = await setUp(options);
      await reader.play(url);
      // Three session timeouts, with a keep-alive every quarter of one on two of them.
      const until = Date.now() + 3 * SESSION_TIMEOUT_S * 1000;
      while (Date.now() < until) {
        assert.equal((await getParameter.request('GET_PARAMETER', url, { Session: a }, 10_000)).status, 200);
        assert.equal((await options.request('OPTIONS', url, { Session: b }, 10_000)).status, 200);
        await sleep((SESSION_TIMEOUT_S * 1000) / 4);
      }
      assert.equal((await getParameter.request('GET_PARAMETER', url, { Session: a }, 10_000)).status, 200, 'GET_PARAMETER kept its session');
      assert.equal((await options.request('GET_PARAMETER', url, { Session: b }, 10_000)).status, 200, 'OPTIONS kept its session');
      const before = reader.rtpBytes;
      await sleep(1000);
      assert.ok(!reader.isClosed && reader.rtpBytes > before, `the reading viewer still gets the stream (${before} → ${reader.rtpBytes} bytes)`);
      await Promise.race([
        silent.ended,
        sleep(CLOSE_WITHIN_MS).then(() => assert.fail(`a session without a sign of life still holds its connection after ${CLOSE_WITHIN_MS} ms`)),
      ]);
    } finally {
      for (const v of [silent, getParameter, options, reader]) v.close();
    }
  });
});
