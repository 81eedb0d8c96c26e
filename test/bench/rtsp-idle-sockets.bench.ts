/**
 * Is RTSP reachable while idle sockets hold its port (issue 25, item 2)? A real lookout-edge (the
 * rtsp-camera image, default RTSP settings) and LOOKOUT_BENCH_SOCKETS (1 000) idle TCP sockets to its
 * RTSP port, from one source address or spread over LOOKOUT_BENCH_ADDRESSES (127.0.x.y), opened once
 * or, with LOOKOUT_BENCH_RECONNECT_MS, reopened that long after the server closes one (what an
 * attacker does). ffprobe from 127.0.0.1 at 2 s, 15 s and 30 s: whether it reads the stream, and how
 * long it took; the baseline is ffprobe with no idle socket.
 *
 *   node dist/test/bench/rtsp-idle-sockets.bench.js     (npm run bench -- rtsp-idle)
 *   LOOKOUT_BENCH_ADDRESSES=100 LOOKOUT_BENCH_RECONNECT_MS=1000 node dist/test/bench/rtsp-idle-sockets.bench.js
 */
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { EmbeddedBroker } from '../../hub/src/broker/embedded-broker.js';
import { startDeviceProcess } from '../support/device-process.js';

const SOCKETS = Number(process.env.LOOKOUT_BENCH_SOCKETS ?? 1000);
const ADDRESSES = Number(process.env.LOOKOUT_BENCH_ADDRESSES ?? 1);
const RECONNECT_MS = Number(process.env.LOOKOUT_BENCH_RECONNECT_MS ?? 0);
const PROBE_AT_MS = [2000, 15_000, 30_000];

const broker = await EmbeddedBroker.start({ port: 0 });
const device = await startDeviceProcess({
  deviceId: 'cam-idle-bench',
  image: join(packageRoot(), 'test', 'fixtures', 'images', 'rtsp-camera.json'),
  mqtt: broker.url,
  env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', RTSP_H264: 'off', LOOKOUT_LOG_LEVEL: 'warn' },
});
const port = device.ready.ports.rtsp;
const url = `rtsp://127.0.0.1:${port}/preview`;

function probe(): Promise<{ ok: boolean; ms: number; said: string }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const args = ['-v', 'error', '-rtsp_transport', 'tcp', '-show_entries', 'stream=codec_name,width,height', '-of', 'csv=p=0', url];
    execFile('ffprobe', args, { timeout: 30_000 }, (err, out, errOut) =>
      resolve({ ok: !err && out.trim() === 'hevc,320,240', ms: Date.now() - started, said: (out.trim() || errOut.trim()).slice(0, 80) }),
    );
  });
}

console.log('baseline, no idle socket:', JSON.stringify(await probe()));
const held = new Set<Socket>();
let connects = 0;
let closed = 0;
let stopped = false;
const hold = (i: number): void => {
  if (stopped) return;
  const n = i % ADDRESSES;
  const localAddress = `127.0.${10 + Math.floor(n / 250)}.${1 + (n % 250)}`;
  const s = connect({ port, host: '127.0.0.1', localAddress }, () => {
    held.add(s);
    connects++;
  });
  s.on('error', () => undefined);
  s.on('close', () => {
    held.delete(s);
    closed++;
    if (RECONNECT_MS > 0) setTimeout(() => hold(i), RECONNECT_MS);
  });
};
for (let i = 0; i < SOCKETS; i++) hold(i);
const started = Date.now();
for (const at of PROBE_AT_MS) {
  await sleep(Math.max(0, at - (Date.now() - started)));
  const r = await probe();
  console.log(
    `${SOCKETS} idle sockets from ${ADDRESSES} address(es), reconnect ${RECONNECT_MS || 'off'}, t=${at / 1000} s: held ${held.size}, connects ${connects}, closed by the server ${closed}; ffprobe ${JSON.stringify(r)}`,
  );
}
stopped = true;
for (const s of held) s.destroy();
await device.stop();
await broker.close();
