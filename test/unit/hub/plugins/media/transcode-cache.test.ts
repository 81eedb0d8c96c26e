/**
 * The transcode cache with real ffmpeg and real files: one build however many ask at once, the
 * mp4 ffprobe reads with the chunk's duration, temporary files never served and removed at start,
 * eviction by size (least recently used), and a corrupt chunk is recording_unreadable, not a crash.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LookoutError } from '../../../../../core/src/index.js';
import { clipReply } from '../../../../../hub/plugins/media/src/clip-reply.js';
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

describe('TranscodeCache under load', () => {
  let scratch: ScratchDir;
  before(async () => {
    scratch = await scratchDir('media-cache-load-');
  });
  after(() => scratch.cleanup());

  /** A cache folder holding `n` clips of `size` bytes, indexed with room for all of them. */
  async function filledCache(name: string, n: number, size: number) {
    const dir = join(scratch.dir, name);
    await mkdir(dir, { recursive: true });
    for (let i = 0; i < n; i++) await writeFile(join(dir, fileNameOf(`cam/${i}.h265`, 'h264')), Buffer.alloc(size, i));
    const options = { dir, maxBytes: n * size, concurrency: 1, timeoutMs: 60_000 };
    const cache = new TranscodeCache(options);
    await cache.init();
    return { dir, options, cache };
  }

  const onDisk = async (dir: string) => {
    let bytes = 0;
    const names = (await readdir(dir)).filter((n) => n.endsWith('.mp4'));
    for (const n of names) bytes += (await stat(join(dir, n))).size;
    return { files: names.length, bytes };
  };

  it('two evictions at once remove each clip once: the byte count stays what is on disk', async () => {
    const { dir, options, cache } = await filledCache('evict-race', 4, 1000);
    options.maxBytes = 1500;
    const evict = (cache as unknown as { evict(): Promise<void> }).evict.bind(cache);
    // The second starts while the first awaits its first removal, with the next one still on its list.
    await Promise.all([evict(), evict()]);
    const disk = await onDisk(dir);
    assert.deepEqual(disk, { files: 1, bytes: 1000 });
    assert.equal(cache.stats().bytes, disk.bytes);
    assert.equal(cache.stats().entries, disk.files);
    assert.equal(cache.stats().evictions, 3);
  });

  it('a clip opened for a client still reads to its end when it is evicted meanwhile', async () => {
    const { dir, options, cache } = await filledCache('evict-stream', 2, 300_000);
    const clip = cache.peek('cam/0.h265', 'h264')!;
    const answer = (await clipReply(clip, {})) as unknown as { body: NodeJS.ReadableStream };
    assert.ok(answer, 'opened');
    cache.peek('cam/1.h265', 'h264');
    options.maxBytes = 300_000;
    await (cache as unknown as { evict(): Promise<void> }).evict();
    assert.ok(!(await readdir(dir)).includes(fileNameOf('cam/0.h265', 'h264')), 'evicted from disk');
    let read = 0;
    for await (const piece of answer.body) read += (piece as Buffer).length;
    assert.equal(read, clip.size);
  });

  it('caps the clip-build queue with device_busy and drops builds whose requests all went away', async () => {
    const cache = new TranscodeCache({ dir: join(scratch.dir, 'queue'), maxBytes: 50e6, concurrency: 1, maxQueued: 2, timeoutMs: 60_000 });
    await cache.init();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let sourcesAsked = 0;
    // A source that waits, then fails: no ffmpeg is needed to hold the one slot.
    const source = async (): Promise<ClipSource> => {
      sourcesAsked++;
      await gate;
      throw new LookoutError('recordings_unavailable', 'test source');
    };
    const first = cache.get('cam/a.h265', 'h264', source);
    const gone = new AbortController();
    const queued = [cache.get('cam/b.h265', 'h264', source, gone.signal), cache.get('cam/c.h265', 'h264', source)];
    // The same clip again joins its build instead of queueing another.
    const sameAsB = cache.get('cam/b.h265', 'h264', source, gone.signal);
    assert.equal(cache.stats().queued, 2);
    await assert.rejects(
      cache.get('cam/d.h265', 'h264', source),
      (e: unknown) => e instanceof LookoutError && e.code === 'device_busy' && /retry later/.test(e.message),
    );
    gone.abort(new Error('client went away'));
    await assert.rejects(queued[0], /client went away/);
    await assert.rejects(sameAsB, /client went away/);
    assert.equal(cache.stats().queued, 1);
    open();
    await assert.rejects(first, /test source/);
    await assert.rejects(queued[1], /test source/);
    // a and c were built (and failed); b, all of whose requests left, never asked its source.
    assert.equal(sourcesAsked, 2);
    assert.equal(cache.stats().active, 0);
  });
});
