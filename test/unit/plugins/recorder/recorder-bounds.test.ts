/**
 * The recorder's bounds and edges, on real files and real H.265 pictures: the automatic prune never
 * takes evidence when something else fills the disk; a disk that hangs costs bounded memory (pictures
 * dropped, the chunk in progress abandoned, resumed on a keyframe); a chunk's ended_at is wall time;
 * recovery checks a chunk under a dot-name before it is listed; the weapon gate; and the describer
 * never echoes its API key.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { accessUnitsOf, type AccessUnit } from '../../../../lib/media/index.js';
import type { EncodedPicture } from '../../../../plugins/encode/src/service.js';
import { chunkName, files } from '../../../../plugins/recorder/src/chunk-files.js';
import { ChunkWriter, type CompletedChunk } from '../../../../plugins/recorder/src/chunk-writer.js';
import { describeClip, MAX_ANSWER_BYTES } from '../../../../plugins/recorder/src/describer.js';
import { justification, summarize } from '../../../../plugins/recorder/src/detection-log.js';
import { chunkInventory, pruneUntilHealthy, type VolumeProbe } from '../../../../plugins/recorder/src/prune.js';
import { recommendation } from '../../../../plugins/recorder/src/recommendation.js';
import { recoverRecordings } from '../../../../plugins/recorder/src/recovery.js';
import { buildSidecar, readSidecar } from '../../../../plugins/recorder/src/sidecar.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';
import { realChunkBytes, writeChunks } from './chunk-fixtures.js';
import { decodeChunk } from './recorder-harness.js';

const gates = { person: 0.35, weapon: 0.5 };
const stream = { fps: 5, width: 320, height: 240 };
const t0 = Date.parse('2026-03-01T10:00:00Z');

/** `seconds` seconds of real pictures (5 fps, a keyframe every 5), captured at `capturedAt(i)`. */
function pictures(seconds: number, capturedAt: (i: number) => number): EncodedPicture[] {
  const one = realChunkBytes();
  const aus: AccessUnit[] = [];
  for (let s = 0; s < seconds; s++) aus.push(...accessUnitsOf(one));
  return aus.map((au, i) => ({ ...au, index: i, capturedAtMs: capturedAt(i), generation: 1 }));
}

describe('prune at CRITICAL when the recordings are not what fills the disk', () => {
  let scratch: ScratchDir;
  before(async () => (scratch = await scratchDir('lookout-prune-critical-')));
  after(() => scratch.cleanup());

  /** A volume of `capacity` bytes that something else fills but for `spare` bytes more than the chunks take. */
  const volume = (dir: string, other: number, capacity: number, criticalBelowFree: number) => async (): Promise<VolumeProbe> => {
    const used = other + (await chunkInventory(dir)).reduce((n, c) => n + c.size_bytes, 0);
    return { critical: capacity - used < criticalBelowFree, freeBytes: capacity - used };
  };
  const setUp = async (name: string) => {
    const dir = join(scratch.dir, name);
    execFileSync('mkdir', ['-p', dir]);
    const names = await writeChunks(dir, 10, { justified: (i) => i === 1 || i === 8 });
    return { dir, names };
  };
  const left = (dir: string) =>
    readdirSync(dir)
      .filter((n) => n.endsWith('.h265'))
      .sort();

  it('prunes to KEEP_CHUNKS, then only unjustified chunks and never the newest two, and says it is still CRITICAL', async () => {
    const { dir, names } = await setUp('filled');
    // Something else took all but 1 KiB: no removal of recordings gets the volume out of CRITICAL.
    const report = await pruneUntilHealthy(dir, 5, volume(dir, 1e9, 1e9 + 1024 + 10 * statSync(join(dir, names[0])).size, 1e6));
    assert.deepEqual(left(dir), [names[1], names[8], names[9]], 'the justified ones and the newest two stay');
    assert.equal(report.still_critical, true);
    assert.equal(report.stopped_because, 'only_justified_or_newest_left');
    assert.deepEqual(
      report.removed.map((r) => r.name),
      [0, 2, 3, 4, 5, 6, 7].map((i) => names[i]),
    );
    assert.equal(report.kept_chunks, 3);
    for (const n of left(dir)) assert.ok(await readSidecar(dir, n), `${n} keeps its sidecar`);
  });

  it('stops below KEEP_CHUNKS as soon as a removal frees no measurable space', async () => {
    const { dir, names } = await setUp('nothing-freed');
    let calls = 0;
    // Removals free nothing (the files are held open elsewhere, say): always CRITICAL, free space never moves.
    const report = await pruneUntilHealthy(dir, 5, async () => ({ critical: true, freeBytes: 1000 + 0 * calls++ }));
    assert.equal(report.stopped_because, 'nothing_freed');
    assert.deepEqual(
      left(dir),
      [1, 7, 8, 9].map((i) => names[i]),
      'one chunk below KEEP_CHUNKS went, then it stopped',
    );
    assert.equal(report.still_critical, true);
  });

  it('stops as soon as the volume leaves CRITICAL', async () => {
    const { dir, names } = await setUp('healthy');
    const size = statSync(join(dir, names[0])).size;
    // CRITICAL while more than 4 chunks are on the volume.
    const report = await pruneUntilHealthy(dir, 5, volume(dir, 0, 100 * size, 96 * size));
    assert.equal(report.still_critical, false);
    assert.equal(report.stopped_because, 'healthy');
    assert.deepEqual(
      left(dir),
      [1, 7, 8, 9].map((i) => names[i]),
    );
  });

  it('the advice names what fills the disk', () => {
    const r = recommendation({
      isWriting: true,
      lastWriteAtMs: t0,
      startedAtMs: t0 - 60_000,
      nowMs: t0 + 100,
      stallMs: 10_000,
      encoderRunning: true,
      encoderExit: null,
      writeError: null,
      storage: { health: 'CRITICAL', free_gb: 0.001, total_gb: 20, used_pct: 99.99 },
      storageError: null,
      prunedToChunks: 3,
    });
    assert.equal(r, 'storage CRITICAL after pruning to 3 chunks: the recordings are not what fills the disk (99.99% used, 0.001 GB free)');
  });
});

describe('chunk writer: ended_at and the bounded write queue', () => {
  let scratch: ScratchDir;
  before(async () => (scratch = await scratchDir('lookout-writer-')));
  after(() => scratch.cleanup());

  it('ends a chunk at the capture of its last picture plus one frame period, with the media duration beside it', async () => {
    const dir = join(scratch.dir, 'ended');
    execFileSync('mkdir', ['-p', dir]);
    const writer = new ChunkWriter({ dir, chunkSeconds: 1, nextSeq: 0 });
    // Every other frame dropped before the encoder: pictures 400 ms apart at a 5 fps stream.
    const pics = pictures(2, (i) => t0 + i * 400);
    const done: CompletedChunk[] = [];
    for (const p of pics) {
      const c = await writer.write(p, stream);
      if (c) done.push(c);
    }
    const last = await writer.finish();
    if (last) done.push(last);
    const [a, b] = done.map((c) => buildSidecar({ dir, ...c }, gates));
    assert.equal(a.started_at, new Date(t0).toISOString());
    assert.equal(a.ended_at, new Date(t0 + 4 * 400 + 200).toISOString());
    assert.equal(a.duration_s, 1, 'the media duration: 5 pictures at 5 fps');
    assert.equal(b.started_at, new Date(t0 + 5 * 400).toISOString());
    assert.equal(b.ended_at, new Date(t0 + 9 * 400 + 200).toISOString());
  });

  it('drops pictures past RECORDER_MAX_QUEUED_BYTES while the disk hangs, abandons the chunk, resumes on a keyframe', async () => {
    const dir = join(scratch.dir, 'hung');
    execFileSync('mkdir', ['-p', dir]);
    const pics = pictures(3, (i) => t0 + i * 200);
    const cap = pics[0].data.length + pics[1].data.length + pics[2].data.length;
    const writer = new ChunkWriter({ dir, chunkSeconds: 60, nextSeq: 0, maxQueuedBytes: cap });
    // The disk "hangs": the first chunk's file is a FIFO, and opening it blocks until someone reads.
    const fifo = join(dir, files.part(chunkName(t0, 0)));
    execFileSync('mkfifo', [fifo]);
    const accepted = pics.slice(0, 3).map((p) => writer.write(p, stream));
    for (const p of pics.slice(3, 10)) assert.equal(await writer.write(p, stream), null, `picture ${p.index} dropped at once`);
    const q = writer.writeQueue();
    assert.deepEqual([q.queued_bytes, q.queued_pictures, q.dropped_pictures, q.dropping, q.max_queued_bytes], [cap, 3, 7, true, cap]);

    // The disk comes back: the queued pictures drain, then the chunk with the gap is abandoned.
    const reader = createReadStream(fifo);
    reader.resume();
    assert.deepEqual(await Promise.all(accepted), [null, null, null]);
    assert.equal(await writer.finish(), null, 'the chunk in progress was abandoned, not completed');
    reader.destroy();
    assert.equal(existsSync(fifo), false, 'its .part is removed');
    assert.match(writer.lastError?.message ?? '', /write queue full/);

    // The next keyframe starts a new chunk that plays.
    for (const p of pics.slice(10)) assert.equal(await writer.write(p, stream), null);
    const next = await writer.finish();
    assert.ok(next);
    assert.deepEqual([next.name, next.frames, next.keyframes, next.startedAtMs], [chunkName(t0 + 2000, 1), 5, 1, t0 + 2000]);
    decodeChunk(join(dir, next.name), 5);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.endsWith('.h265') || n.endsWith('.part')),
      [next.name],
    );
    assert.deepEqual([writer.writeQueue().dropped_pictures, writer.writeQueue().abandoned_chunks, writer.writeQueue().queued_bytes], [7, 1, 0]);
  });
});

describe('recovery checks a chunk under a dot-name before it is listed', () => {
  let scratch: ScratchDir;
  before(async () => (scratch = await scratchDir('lookout-recovering-')));
  after(() => scratch.cleanup());

  it('removes what a crash during a check left, and recovers the .part again', async () => {
    const dir = scratch.dir;
    const name = chunkName(t0, 3);
    const bytes = Buffer.concat([realChunkBytes(), realChunkBytes()]);
    writeFileSync(join(dir, files.part(name)), bytes);
    // The crash came while the recovered copy was being checked: half written, it does not play.
    writeFileSync(join(dir, `.${name}.recovering`), bytes.subarray(0, 700));
    writeFileSync(join(dir, `.${chunkName(t0 - 5000, 2)}.recovering`), bytes.subarray(0, 300));
    const report = await recoverRecordings({ dir, ...stream, gates });
    assert.deepEqual(report.recovered, [name]);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.startsWith('.')),
      [],
      'no dot-name is left',
    );
    assert.deepEqual(
      readdirSync(dir)
        .filter((n) => n.endsWith('.h265'))
        .sort(),
      [name],
    );
    decodeChunk(join(dir, name), 5);
    const sidecar = await readSidecar(dir, name);
    assert.deepEqual([sidecar?.recovered, sidecar?.frame_count], [true, 9], 'the whole pictures before the cut one');
  });
});

describe('weapon gate', () => {
  it('a weapon under JUSTIFY_WEAPON_CONFIDENCE does not justify a chunk; at it, it does, and the sidecar says by which gates', () => {
    const dets = (p: number) => [{ t: t0, dets: [{ c: 11, p }] }];
    const sidecar = (p: number) =>
      buildSidecar(
        {
          dir: '/r',
          name: chunkName(t0, 0),
          startedAtMs: t0,
          frames: 5,
          keyframes: 1,
          fps: 5,
          width: 320,
          height: 240,
          sizeBytes: 1,
          dets: dets(p),
          strideFps: 0,
        },
        gates,
      );
    assert.deepEqual([sidecar(0.2).justified, sidecar(0.2).justified_reason], [false, null]);
    assert.deepEqual([sidecar(0.6).justified, sidecar(0.6).justified_reason], [true, 'weapon: knife 0.60 (gates: person >= 0.35, weapon >= 0.5)']);
    assert.equal(justification(summarize(dets(0.2), 0.35), { person: 0.35, weapon: 0.1 }), 'weapon: knife 0.20 (gates: person >= 0.35, weapon >= 0.1)');
  });
});

describe('describer answers', () => {
  const key = 'sk-live-secret-0123456789';
  let server: Server;
  let url: string;
  let mode: 'echo-error' | 'echo-content' | 'huge' = 'echo-error';
  before(async () => {
    // Test double of a describer that echoes the request's headers back (as some proxies' errors do).
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const headers = JSON.stringify(req.headers);
        if (mode === 'echo-error') res.writeHead(401, { 'content-type': 'text/plain' }).end(`unauthorized: ${headers}`);
        else if (mode === 'echo-content')
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ choices: [{ message: { content: `A person; you sent authorization: ${req.headers.authorization}` } }] }));
        else {
          res.writeHead(200, { 'content-type': 'application/json' });
          const piece = Buffer.alloc(64 * 1024, 0x20);
          const more = () => {
            while (!res.destroyed && res.write(piece));
            if (!res.destroyed) res.once('drain', more);
          };
          res.on('close', () => res.removeAllListeners('drain'));
          more();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const ask = () => describeClip({ url, model: 'm', apiKey: key, timeoutMs: 5000 }, 'counts', Buffer.from([0xff, 0xd8]));

  it('an HTTP error gives its status and a fixed message, never the body (which echoed the key)', async () => {
    mode = 'echo-error';
    await assert.rejects(ask(), (err: Error) => {
      assert.equal(err.message, 'describer answered HTTP 401');
      return true;
    });
  });

  it('redacts a bearer token from the text it returns', async () => {
    mode = 'echo-content';
    const text = await ask();
    assert.ok(!text.includes(key), text);
    assert.equal(text, 'A person; you sent authorization: Bearer [redacted]');
  });

  it('stops reading an answer at the byte cap', async () => {
    mode = 'huge';
    const started = Date.now();
    await assert.rejects(ask(), new RegExp(`describer answer larger than ${MAX_ANSWER_BYTES} bytes`));
    assert.ok(Date.now() - started < 4000, 'long before the timeout');
  });
});
