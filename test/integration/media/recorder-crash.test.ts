/**
 * A recorder SIGKILLed in the middle of a chunk, then started again on the same folder: the chunk
 * it was writing comes back as the pictures it holds whole, leftovers that do not play are removed,
 * a chunk without a sidecar gets one rebuilt from its stream, manifest lines of gone chunks go, and
 * every chunk the index then lists plays to its last picture (ffmpeg decodes it, ffprobe counts what
 * its sidecar says). Nothing crashes on garbage.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ChunkSidecarSchema, ListRecordingChunksResultSchema, RecordingStatusResultSchema } from '../../../core/src/contracts/index.js';
import { accessUnitsOf } from '../../../lib/media/index.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { decodeChunk, ffprobeChunk, startRecorder, waitUntil, type RecorderRig } from '../../unit/plugins/recorder/recorder-harness.js';

const OLD = '20250101T000000000Z';

describe('recorder: SIGKILL mid-chunk, then a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'lookout-rec-crash-'));
  const recordings = join(dataDir, 'data', 'recordings');
  let rig: RecorderRig | undefined;
  let partPictures = 0;
  let partName = '';
  let truncatedPictures = 0;

  before(async () => {
    const child = spawn(process.execPath, [join(packageRoot(), 'dist/test/unit/plugins/recorder/recorder-child.js'), dataDir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await waitUntil('the child to record', () => existsSync(join(recordings, '.h265_status')), 30_000);
      // Kill it with two chunks complete and the third one well under way.
      partName = await waitUntil(
        'a chunk in progress with pictures',
        () => {
          const complete = readdirSync(recordings).filter((n) => /^\d.*\.h265$/.test(n) && existsSync(join(recordings, n.replace('.h265', '.json'))));
          const part = readdirSync(recordings).find((n) => n.endsWith('.h265.part'));
          if (complete.length < 2 || !part) return undefined;
          return accessUnitsOf(readFileSync(join(recordings, part))).length >= 5 ? part : undefined;
        },
        30_000,
      );
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    // What the crash left, read after the process is gone (no more writes).
    partPictures = accessUnitsOf(readFileSync(join(recordings, partName))).length;
    assert.ok(existsSync(join(recordings, partName)), 'the kill left the chunk in progress as a .part');

    // More leftovers a crash or a bad disk leaves: recovery handles each on its own.
    const complete = readdirSync(recordings).filter((n) => /^\d.*\.h265$/.test(n));
    const good = readFileSync(join(recordings, complete[0]));
    writeFileSync(join(recordings, `.${OLD}_000900.h265.part`), randomBytes(20_000)); // garbage in progress
    const aus = accessUnitsOf(good);
    const cut = aus.slice(0, 3).reduce((n, a) => n + a.data.length, 0) + Math.floor(aus[3].data.length / 2);
    writeFileSync(join(recordings, `.${OLD}_000901.h265.part`), good.subarray(0, cut)); // cut mid-picture
    truncatedPictures = 3;
    writeFileSync(join(recordings, `${OLD}_000902.h265`), randomBytes(20_000)); // complete garbage, no sidecar
    copyFileSync(join(recordings, complete[0]), join(recordings, `${OLD}_000903.h265`)); // sidecar lost
    writeFileSync(join(recordings, `${OLD}_000905.json`), '{"name": "stale"}'); // sidecar of nothing
    const line = JSON.parse(readFileSync(join(recordings, complete[0].replace('.h265', '.json')), 'utf8'));
    appendFileSync(join(recordings, 'recent_manifest.jsonl'), `${JSON.stringify({ ...line, name: `${OLD}_000904.h265` })}\n`); // chunk gone

    rig = await startRecorder({ dataDir });
  });
  after(async () => {
    await rig?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('remuxes the chunk in progress into its whole pictures, marked recovered', () => {
    const name = partName.slice(1, -'.part'.length);
    assert.ok(!existsSync(join(recordings, partName)));
    const sidecar = ChunkSidecarSchema.parse(JSON.parse(readFileSync(join(recordings, name.replace('.h265', '.json')), 'utf8')));
    assert.equal(sidecar.recovered, true);
    // The last picture may have been cut by the kill: only the ones before it are kept.
    assert.equal(sidecar.frame_count, partPictures - 1);
    const probe = ffprobeChunk(join(recordings, name), sidecar.fps);
    assert.deepEqual([probe.frames, probe.keyframes], [sidecar.frame_count, sidecar.keyframe_count]);
    assert.ok(existsSync(join(recordings, name.replace('.h265', '.dets.jsonl'))));

    const truncated = ChunkSidecarSchema.parse(JSON.parse(readFileSync(join(recordings, `${OLD}_000901.json`), 'utf8')));
    // Three whole pictures and half of the fourth: the three are kept.
    assert.deepEqual([truncated.frame_count, truncated.recovered], [truncatedPictures, true]);
  });

  it('removes what does not play and rebuilds a lost sidecar', () => {
    const names = readdirSync(recordings);
    assert.deepEqual(
      names.filter((n) => n.endsWith('.part') || n.endsWith('.tmp')),
      [],
    );
    assert.ok(!names.includes(`${OLD}_000902.h265`), 'garbage chunk removed');
    assert.ok(!names.includes(`${OLD}_000905.json`), 'sidecar of no chunk removed');
    const rebuilt = ChunkSidecarSchema.parse(JSON.parse(readFileSync(join(recordings, `${OLD}_000903.json`), 'utf8')));
    assert.deepEqual([rebuilt.recovered, rebuilt.width, rebuilt.height, rebuilt.started_at], [true, 320, 240, '2025-01-01T00:00:00.000Z']);
    assert.equal(rebuilt.size_bytes, statSync(join(recordings, `${OLD}_000903.h265`)).size);
  });

  it('lists only chunks that play, and the manifest only chunks that exist', async () => {
    const listed = ListRecordingChunksResultSchema.parse(await rig!.call('list_recording_chunks', { limit: 200 }));
    const onDisk = readdirSync(recordings).filter((n) => /^\d.*\.h265$/.test(n));
    assert.equal(listed.total_count, onDisk.length);
    assert.deepEqual(listed.chunks.map((c) => c.name).sort(), [...onDisk].sort());
    for (const c of listed.chunks) {
      decodeChunk(join(recordings, c.name), c.fps!);
      const probe = ffprobeChunk(join(recordings, c.name), c.fps!);
      assert.deepEqual([probe.frames, probe.keyframes], [c.frame_count, c.keyframe_count], c.name);
    }
    const manifest = readFileSync(join(recordings, 'recent_manifest.jsonl'), 'utf8').trim().split('\n');
    assert.ok(manifest.length >= 4);
    for (const l of manifest) assert.ok(existsSync(join(recordings, JSON.parse(l).name)), l.slice(0, 80));
    assert.ok(!manifest.some((l) => l.includes('_000904')));
  });

  it('records on after the restart, the sequence going on past the old names', async () => {
    const before = readdirSync(recordings).filter((n) => /^\d.*\.h265$/.test(n)).length;
    await waitUntil('a new chunk', () => readdirSync(recordings).filter((n) => /^\d.*\.h265$/.test(n)).length > before, 15_000);
    const seqs = readdirSync(recordings)
      .filter((n) => /^\d.*\.h265$/.test(n))
      .map((n) => Number(/_(\d{6})\.h265$/.exec(n)![1]));
    assert.equal(new Set(seqs).size, seqs.length, 'no name reused');
    const status = RecordingStatusResultSchema.parse(await rig!.call('get_recording_status'));
    assert.equal(status.is_writing_data, true);
    assert.ok(rig!.runtime.plugins.every((p) => p.state === 'ok'));
  });
});
