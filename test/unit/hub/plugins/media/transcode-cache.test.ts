/**
 * The transcode cache with real ffmpeg and real files: one build however many ask at once, the
 * mp4 ffprobe reads with the chunk's duration, temporary files never served and removed at start,
 * eviction by size (least recently used), and a corrupt chunk is recording_unreadable, not a crash.
 */
import assert from 'node:assert/strict';
import { copyFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LookoutError } from '../../../../../core/src/index.js';
import { TranscodeCache, fileNameOf, type ClipSource } from '../../../../../hub/plugins/media/src/transcode-cache.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';
import { makeChunk, probe } from './chunk-fixtures.js';

describe('TranscodeCache', () => {
  let scratch: ScratchDir;
  let chunkPath: string;
  let sources = 0;

  /** A source as the fetcher gives one: a private copy, removed on release. */
  const sourceOf =
    (from: string, fps = 5) =>
    async (): Promise<ClipSource> => {
      sources++;
      const path = join(scratch.dir, `src-${sources}.h265`);
      await copyFile(from, path);
      return { path, fps, release: async () => undefined };
    };

  before(async () => {
    scratch = await scratchDir('media-cache-');
    const sidecar = await makeChunk(join(scratch.dir, 'rec'), { seconds: 2, fps: 5 });
    chunkPath = join(scratch.dir, 'rec', sidecar.name);
  });
  after(() => scratch.cleanup());

  it('builds one H.264 mp4 for 20 requests that arrive together, with the chunk duration', async () => {
    const transcodes: string[] = [];
    const cache = new TranscodeCache({
      dir: join(scratch.dir, 'c1'),
      maxBytes: 50e6,
      concurrency: 2,
      timeoutMs: 60_000,
      onTranscode: (t) => transcodes.push(t.key),
    });
    await cache.init();
    sources = 0;
    const clips = await Promise.all(Array.from({ length: 20 }, () => cache.get('cam-1/a.h265', 'h264', sourceOf(chunkPath))));
    assert.equal(transcodes.length, 1);
    assert.equal(sources, 1);
    assert.equal(new Set(clips.map((c) => c.etag)).size, 1);
    const p = await probe(clips[0].path);
    assert.equal(p.codec, 'h264');
    assert.ok(Math.abs(p.duration - 2) < 0.25, `duration ${p.duration}`);
    assert.equal(cache.stats().transcodes, 1);
    // A later request is a hit: no new build.
    await cache.get('cam-1/a.h265', 'h264', sourceOf(chunkPath));
    assert.equal(cache.stats().transcodes, 1);
  });

  it('remuxes the HEVC original into an hvc1 mp4', async () => {
    const cache = new TranscodeCache({ dir: join(scratch.dir, 'c2'), maxBytes: 50e6, concurrency: 1, timeoutMs: 60_000 });
    await cache.init();
    const clip = await cache.get('cam-1/a.h265', 'hevc', sourceOf(chunkPath));
    const p = await probe(clip.path);
    assert.equal(p.codec, 'hevc');
    assert.equal(p.tag, 'hvc1');
    assert.ok(Math.abs(p.duration - 2) < 0.25, `duration ${p.duration}`);
  });

  it('answers recording_unreadable for a corrupt chunk and leaves no file behind', async () => {
    const dir = join(scratch.dir, 'c3');
    const cache = new TranscodeCache({ dir, maxBytes: 50e6, concurrency: 1, timeoutMs: 60_000 });
    await cache.init();
    const junk = join(scratch.dir, 'junk.h265');
    await writeFile(junk, Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251)));
    await assert.rejects(cache.get('cam-1/junk.h265', 'h264', sourceOf(junk)), (e: unknown) => e instanceof LookoutError && e.code === 'recording_unreadable');
    assert.deepEqual(await readdir(dir), []);
    assert.equal(cache.stats().failures, 1);
    // Not cached: the next request tries again (and fails again, cleanly).
    await assert.rejects(cache.get('cam-1/junk.h265', 'h264', sourceOf(junk)), (e: unknown) => e instanceof LookoutError && e.code === 'recording_unreadable');
  });

  it('plays what a truncated chunk holds', async () => {
    const cache = new TranscodeCache({ dir: join(scratch.dir, 'c4'), maxBytes: 50e6, concurrency: 1, timeoutMs: 60_000 });
    await cache.init();
    const { readFile } = await import('node:fs/promises');
    const whole = await readFile(chunkPath);
    const cut = join(scratch.dir, 'cut.h265');
    await writeFile(cut, whole.subarray(0, Math.floor(whole.length / 2)));
    const clip = await cache.get('cam-1/cut.h265', 'h264', sourceOf(cut));
    const p = await probe(clip.path);
    assert.ok(p.duration > 0 && p.duration < 2, `duration ${p.duration}`);
  });

  it('evicts the least recently used clips past its size bound, and drops leftovers of interrupted builds at start', async () => {
    const dir = join(scratch.dir, 'c5');
    const probeCache = new TranscodeCache({ dir: join(scratch.dir, 'c5-size'), maxBytes: 50e6, concurrency: 1, timeoutMs: 60_000 });
    await probeCache.init();
    const one = (await probeCache.get('x/a.h265', 'h264', sourceOf(chunkPath))).size;
    // Room for two clips, not three.
    const cache = new TranscodeCache({ dir, maxBytes: Math.floor(one * 2.5), concurrency: 1, timeoutMs: 60_000 });
    await cache.init();
    await cache.get('cam/a.h265', 'h264', sourceOf(chunkPath));
    await cache.get('cam/b.h265', 'h264', sourceOf(chunkPath));
    cache.peek('cam/a.h265', 'h264'); // a is now used after b
    await cache.get('cam/c.h265', 'h264', sourceOf(chunkPath));
    assert.ok(cache.peek('cam/a.h265', 'h264'));
    assert.equal(cache.peek('cam/b.h265', 'h264'), undefined);
    assert.ok(cache.peek('cam/c.h265', 'h264'));
    assert.equal(cache.stats().evictions, 1);
    const files = await readdir(dir);
    assert.equal(files.length, 2);
    assert.ok(!files.includes(fileNameOf('cam/b.h265', 'h264')));

    // A crash mid-build leaves a temporary file: never indexed, removed at the next start.
    await writeFile(join(dir, `${fileNameOf('cam/d.h265', 'h264')}.abcd.tmp`), 'half');
    const again = new TranscodeCache({ dir, maxBytes: Math.floor(one * 2.5), concurrency: 1, timeoutMs: 60_000 });
    await again.init();
    assert.equal((await readdir(dir)).filter((f) => f.endsWith('.tmp')).length, 0);
    assert.equal(again.stats().entries, 2);
    assert.ok(again.peek('cam/c.h265', 'h264'));
    assert.equal(again.peek('cam/d.h265', 'h264'), undefined);
  });
});
