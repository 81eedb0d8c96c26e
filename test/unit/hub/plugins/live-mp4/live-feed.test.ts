import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { LiveFeed } from '../../../../../hub/plugins/live-mp4/src/live-feed.js';
import { startJitteryCamera } from '../../../../browser/jittery-camera.js';

const run = promisify(execFile);

/** Each picture's decode time and duration (seconds) in a fragmented MP4, as ffprobe reads them. */
async function packetTimes(mp4: Buffer): Promise<{ dts: number; duration: number }[]> {
  const dir = await mkdtemp(join(tmpdir(), 'live-feed-'));
  try {
    const file = join(dir, 'live.mp4');
    await writeFile(file, mp4);
    const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=dts_time,duration_time', '-of', 'json', file]);
    const packets = (JSON.parse(stdout) as { packets: { dts_time: string; duration_time: string }[] }).packets;
    return packets.map((p) => ({ dts: Number(p.dts_time), duration: Number(p.duration_time) }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The top-level boxes of an MP4 stream: type and payload (after the 8-byte header). */
function topBoxes(mp4: Buffer): { type: string; body: Buffer }[] {
  const out: { type: string; body: Buffer }[] = [];
  for (let at = 0; at + 8 <= mp4.length;) {
    const size = mp4.readUInt32BE(at);
    assert.ok(size >= 8 && at + size <= mp4.length, `a box of ${size} bytes at ${at}`);
    out.push({ type: mp4.toString('latin1', at + 4, at + 8), body: mp4.subarray(at + 8, at + size) });
    at += size;
  }
  return out;
}

/** The stream of one viewer of a live feed of `camera`, for `ms` after the first keyframe. */
async function viewerBytes(camera: { port: number }, ms: number): Promise<Buffer> {
  const feed = new LiveFeed({
    deviceId: 'cam',
    url: `rtsp://127.0.0.1:${camera.port}/preview_h264`,
    connectTimeoutMs: 10_000,
    maxViewerBufferBytes: 8 << 20,
    maxGopBytes: 8 << 20,
    idleMs: 60_000,
    onClose: () => undefined,
  });
  try {
    await feed.ready(20_000, new AbortController().signal);
    const viewer = feed.addViewer();
    const chunks: Buffer[] = [];
    viewer.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((r) => setTimeout(r, ms));
    viewer.destroy();
    return Buffer.concat(chunks);
  } finally {
    feed.close();
  }
}

const NTP_UNIX_OFFSET_S = 2_208_988_800;

describe('live feed', () => {
  it('puts a prft before every fragment: the picture’s capture time (from the camera’s RTCP sender reports) beside its decode time', async () => {
    const camera = await startJitteryCamera(10, 40);
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const mp4 = await viewerBytes(camera, 1500);
      const times = await packetTimes(mp4);
      const boxes = topBoxes(mp4);
      const prfts = boxes.filter((b) => b.type === 'prft');
      // ffprobe reads every picture of the stream with the prft boxes in it, and there is one prft per picture, just before its moof.
      assert.ok(times.length >= 10, `pictures: ${times.length}`);
      assert.equal(prfts.length, times.length, 'one prft per picture');
      boxes.forEach((b, i) => {
        if (b.type === 'moof') assert.equal(boxes[i - 1]?.type, 'prft', `the moof at box ${i} has its prft before it`);
      });
      const captured = new Set(camera.captured.map((t) => Math.round(t)));
      prfts.forEach(({ body }, i) => {
        assert.equal(body[0], 1, 'version 1 (64-bit media time)');
        assert.equal(body.readUIntBE(1, 3), 24, 'flags 24: the time the picture was captured');
        assert.equal(body.readUInt32BE(4), 1, 'the video track');
        const wallMs = (body.readUInt32BE(8) - NTP_UNIX_OFFSET_S) * 1000 + (body.readUInt32BE(12) / 2 ** 32) * 1000;
        const mediaTime = (body.readUInt32BE(16) * 2 ** 32 + body.readUInt32BE(20)) / 90_000;
        assert.ok(Math.abs(mediaTime - times[i].dts) < 1e-6, `prft ${i}: media time ${mediaTime}, the picture's decode time ${times[i].dts}`);
        // The camera stamped this picture's capture time (to the ms: RTP's 90 kHz and NTP's fraction round).
        assert.ok(
          [-1, 0, 1].some((d) => captured.has(Math.round(wallMs) + d)),
          `prft ${i}: ${new Date(wallMs).toISOString()} is no capture time of the camera's (${camera.captured.length} pictures)`,
        );
      });
    } finally {
      await camera.close();
    }
  });

  it('places the camera’s first GOP (sent in one burst right after PLAY) on the SDP’s frame rate: a new viewer’s first second is not stretched', async () => {
    // 25 fps: the rate before any is known is 10 fps, so a GOP placed before the SDP is read lasts 2.5 times too long.
    const fps = 25;
    const camera = await startJitteryCamera(fps, 8);
    // A GOP of a second in the camera, so that the first PLAY gets a burst of pictures.
    await new Promise((r) => setTimeout(r, 1500));
    try {
      // The burst and a few live pictures after it.
      const times = await packetTimes(await viewerBytes(camera, 1000));
      assert.ok(times.length >= fps / 2, `pictures: ${times.length}`);
      assert.equal(times[0].dts, 0, 'the first picture starts the timeline');
      const frame = 1 / fps;
      for (const [i, t] of times.entries()) {
        // Every picture lasts the nominal frame time (the camera's jitter stays under the tolerance)…
        assert.ok(Math.abs(t.duration - frame) < 0.001, `picture ${i} lasts ${t.duration} s, not ${frame}: ${JSON.stringify(times.slice(0, 12))}`);
        // …and starts where the previous one ended: no gap for a player to stall at.
        if (i > 0) assert.ok(Math.abs(t.dts - (times[i - 1].dts + times[i - 1].duration)) < 0.001, `a gap before picture ${i}`);
      }
    } finally {
      await camera.close();
    }
  });
});
