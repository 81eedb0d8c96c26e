import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';

const USER = 'viewer';
const PASSWORD = 'rtsp-secret-1';
const FPS = 5;
const GOP = 5;

let broker: EmbeddedBroker;
let device: DeviceProcess;
let port: number;

before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  device = await startDeviceProcess({
    deviceId: 'cam-rtsp',
    image: join(packageRoot(), 'test', 'fixtures', 'images', 'rtsp-camera.json'),
    mqtt: broker.url,
    env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: String(FPS), ENCODE_GOP: String(GOP), ONVIF_USER: USER, ONVIF_PASSWORD: PASSWORD },
  });
  port = device.ready.ports.rtsp;
  assert.ok(typeof port === 'number' && port > 0, `ready line ports: ${JSON.stringify(device.ready.ports)}`);
});

after(async () => {
  const exit = await device?.stop();
  await broker?.close();
  assert.equal(exit?.code, 0, device?.logs().slice(-2000));
});

function url(path: string, password = PASSWORD): string {
  return `rtsp://${USER}:${password}@127.0.0.1:${port}${path}`;
}

function run(program: string, args: string[], timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(program, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** ffprobe of the stream; the first DESCRIBE may wait for the encoder's first keyframe (the device just started). */
async function probe(path: string, transport: 'tcp' | 'udp'): Promise<string> {
  const r = await run('ffprobe', ['-v', 'error', '-rtsp_transport', transport, '-show_entries', 'stream=codec_name,width,height', '-of', 'csv=p=0', url(path)]);
  assert.equal(r.code, 0, `ffprobe ${transport} ${path}: ${r.stderr}`);
  return r.stdout.trim();
}

/** One raw exchange on a fresh connection: what the server answers to `text`. */
function raw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let got = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      got += d;
      if (/\r\n\r\n/.test(got)) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
  });
}

test('ffprobe reads /preview (H.265) and /preview_h264 (H.264) over TCP and UDP at the encoder size', async () => {
  assert.equal(await probe('/preview', 'tcp'), 'hevc,320,240');
  assert.equal(await probe('/preview', 'udp'), 'hevc,320,240');
  assert.equal(await probe('/preview_h264', 'tcp'), 'h264,320,240');
  assert.equal(await probe('/preview_h264', 'udp'), 'h264,320,240');
});

test('ffmpeg records 5 s of each path with the right number of frames', async () => {
  // 5 s at 5 fps is 25 pictures. -t counts media time from the first packet's timestamp (90 kHz
  // from the capture times), so the replayed GOP at the start costs nothing; the slack of one GOP
  // covers where in its GOP the recording starts and a frame the pacer may drop on a loaded machine.
  const record = async (path: string): Promise<number> => {
    const r = await run('ffmpeg', ['-v', 'error', '-rtsp_transport', 'tcp', '-i', url(path), '-t', '5', '-c', 'copy', '-f', 'framecrc', '-']);
    assert.equal(r.code, 0, `ffmpeg ${path}: ${r.stderr}`);
    return r.stdout.split('\n').filter((l) => /^\d+,/.test(l)).length;
  };
  const [h265, h264] = await Promise.all([record('/preview'), record('/preview_h264')]);
  const expected = 5 * FPS;
  for (const [name, frames] of [
    ['H.265', h265],
    ['H.264', h264],
  ] as const) {
    assert.ok(Math.abs(frames - expected) <= GOP, `${name}: ${frames} frames in 5 s, expected ${expected} ± ${GOP}`);
  }
});

test('three viewers at once each decode the stream', async () => {
  const view = (transport: string): Promise<{ code: number; stdout: string; stderr: string }> =>
    run('ffmpeg', ['-v', 'error', '-rtsp_transport', transport, '-i', url('/preview'), '-t', '3', '-f', 'framemd5', '-']);
  const results = await Promise.all([view('tcp'), view('tcp'), view('udp')]);
  for (const [i, r] of results.entries()) {
    assert.equal(r.code, 0, `viewer ${i}: ${r.stderr}`);
    const frames = r.stdout.split('\n').filter((l) => /^\d+,/.test(l)).length;
    assert.ok(frames >= 3 * FPS - GOP, `viewer ${i} decoded ${frames} frames in 3 s`);
  }
});

test('Digest: no credentials or a wrong password get 401, OPTIONS answers without them', async () => {
  const describe = await raw(`DESCRIBE rtsp://127.0.0.1:${port}/preview RTSP/1.0\r\nCSeq: 2\r\nAccept: application/sdp\r\n\r\n`);
  assert.match(describe, /^RTSP\/1\.0 401 /);
  assert.match(describe, /WWW-Authenticate: Digest realm="Lookout", nonce="[^"]+", algorithm=MD5/);
  const options = await raw(`OPTIONS rtsp://127.0.0.1:${port}/preview RTSP/1.0\r\nCSeq: 1\r\n\r\n`);
  assert.match(options, /^RTSP\/1\.0 200 OK/);
  assert.match(options, /Public: .*DESCRIBE/);
  const wrong = await run('ffprobe', ['-v', 'error', '-rtsp_transport', 'tcp', url('/preview', 'not-the-password')]);
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.stderr, /401|Unauthorized/i);
});

test('a malformed request gets 400 and the server goes on serving', async () => {
  assert.match(await raw('THIS IS NOT RTSP\r\n\r\n'), /^RTSP\/1\.0 400 /);
  assert.match(await raw(`OPTIONS rtsp://127.0.0.1:${port}/preview RTSP/1.0\r\n\r\n`), /^RTSP\/1\.0 400 /, 'no CSeq');
  assert.match(await raw(`OPTIONS * RTSP/1.0\r\nCSeq: 1\r\nContent-Length: lots\r\n\r\n`), /^RTSP\/1\.0 400 /);
  assert.match(await raw(`OPTIONS * RTSP/1.0\r\nCSeq: 9\r\n${'X-Pad: y\r\n'.repeat(3000)}\r\n`), /^RTSP\/1\.0 400 /, 'head too long');
  assert.equal(await probe('/preview', 'tcp'), 'hevc,320,240');
});
