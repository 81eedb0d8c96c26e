/**
 * The recorder on the encode plugin itself (sim camera → libx265 through the plugin's encoder,
 * 320x240 at 5 fps): its chunks play with the pictures, key frames and durations of their sidecars,
 * and an encoder killed mid-chunk completes that chunk and starts the next one on the new run's
 * first keyframe, every chunk still playing.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ChunkSidecarSchema, RecordingStatusResultSchema } from '../../../core/src/contracts/index.js';
import { EncodedVideoToken } from '../../../plugins/encode/src/service.js';
import { decodeChunk, ffprobeChunk, startRecorder, waitUntil, type RecorderRig } from '../../unit/plugins/recorder/recorder-harness.js';

describe('recorder on the encode plugin', () => {
  let rig: RecorderRig;
  const sidecars = () =>
    readdirSync(rig.recordings)
      .filter((n) => n.endsWith('.json'))
      .sort()
      .map((n) => ChunkSidecarSchema.parse(JSON.parse(readFileSync(join(rig.recordings, n), 'utf8'))));

  before(async () => {
    rig = await startRecorder({ realEncoder: true, env: { ENCODE_RESTART_MIN_MS: '200' } });
    await waitUntil('three chunks', () => sidecars().length >= 3, 40_000);
  });
  after(async () => {
    await rig?.stop();
  });

  it('writes chunks whose frames, key frames and durations ffprobe confirms', () => {
    for (const s of sidecars()) {
      const probe = ffprobeChunk(join(rig.recordings, s.name), s.fps);
      assert.deepEqual([probe.frames, probe.keyframes], [s.frame_count, s.keyframe_count], s.name);
      assert.ok(Math.abs(probe.duration_s - s.duration_s) < 1e-6);
      assert.deepEqual([s.width, s.height, s.fps], [320, 240, 5]);
      assert.ok(s.keyframe_count >= 1 && s.duration_s >= 1, `${s.name}: ${s.duration_s} s`);
    }
  });

  it('completes the chunk when the encoder dies and starts the next on the new run', async () => {
    const video = rig.runtime.service(EncodedVideoToken)!;
    const pid = video.encoder().pid;
    assert.ok(pid, 'a software encoder has a pid');
    const before = sidecars().length;
    process.kill(pid, 'SIGKILL');
    await waitUntil('a new encoder run', () => video.encoder().generation >= 2 && video.running, 20_000);
    await waitUntil('two more chunks', () => sidecars().length >= before + 2, 20_000);
    for (const s of sidecars()) decodeChunk(join(rig.recordings, s.name), s.fps);
    // The decodes above block this process's event loop (execFileSync) for a while: writing is judged once it runs again.
    const status = await waitUntil('writing on the new run', async () => {
      const s = RecordingStatusResultSchema.parse(await rig.call('get_recording_status'));
      return s.is_writing_data ? s : undefined;
    });
    assert.equal(status.is_writing_data, true);
    assert.ok(!status.recommendation.includes('stalled'), status.recommendation);
  });
});
