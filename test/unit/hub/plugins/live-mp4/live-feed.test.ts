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

describe('live feed', () => {
  it('places the camera’s first GOP (sent in one burst right after PLAY) on the SDP’s frame rate: a new viewer’s first second is not stretched', async () => {
    // 25 fps: the rate before any is known is 10 fps, so a GOP placed before the SDP is read lasts 2.5 times too long.
    const fps = 25;
    const camera = await startJitteryCamera(fps, 8);
    // A GOP of a second in the camera, so that the first PLAY gets a burst of pictures.
    await new Promise((r) => setTimeout(r, 1500));
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
      // The burst and a few live pictures after it.
      await new Promise((r) => setTimeout(r, 1000));
      viewer.destroy();
      const times = await packetTimes(Buffer.concat(chunks));
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
      feed.close();
      await camera.close();
    }
  });
});
