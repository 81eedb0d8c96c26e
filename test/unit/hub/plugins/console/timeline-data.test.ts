/**
 * Which recorded chunk the device timeline plays for a moment, and from where in its video. A device
 * that drops pictures before its encoder (a loaded 2-core machine; a throttled camera) writes chunks
 * whose media is shorter than the wall time they span: four seconds of pictures over nine seconds of
 * the day. The console took a chunk to end at started_at + duration_s, so an incident in the rest of
 * it had no clip ("No recording holds that moment") though the recorder held it: the browser test of
 * the timeline failed so under load. The page's own source is bundled here as the build bundles it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { build } from 'esbuild';
import { packageRoot } from '../../../../../core/src/paths/package-root.js';

type Chunk = { device_id: string; name: string; started_at?: string; ended_at?: string; duration_s?: number; playUrl: string };
type Span = { from: number; to: number };
interface TimelineData {
  chunkAt(chunks: readonly Chunk[], at: number, holeMs?: number): { chunk: Chunk; offsetS: number } | null;
  chunkSpan(c: Chunk): Span | null;
}

const T0 = Date.parse('2026-11-27T01:54:07.881Z');
/** As a loaded test machine recorded them (4 s chunks at 5 fps: 20 pictures each over about 9.5 s). */
const CHUNKS: Chunk[] = [chunk('20261127T015358502Z_000001.h265', T0 - 9400, T0 - 200, 4), chunk('20261127T015407881Z_000002.h265', T0, T0 + 9600, 4)];

function chunk(name: string, from: number, to: number | null, durationS: number): Chunk {
  return {
    device_id: 'cam-front',
    name,
    started_at: new Date(from).toISOString(),
    ...(to === null ? {} : { ended_at: new Date(to).toISOString() }),
    duration_s: durationS,
    playUrl: `/media/clips/cam-front/${name.replace(/\.h265$/, '')}.mp4`,
  };
}

describe('timeline data: the chunk holding a moment', () => {
  let tl: TimelineData;
  before(async () => {
    const out = await build({
      entryPoints: [join(packageRoot(), 'hub', 'plugins', 'console', 'web', 'timeline-data.ts')],
      bundle: true,
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    tl = (await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`)) as TimelineData;
  });

  it('a chunk spans its wall time, to ended_at, however short its media', () => {
    assert.deepEqual(tl.chunkSpan(CHUNKS[1]), { from: T0, to: T0 + 9600 });
  });

  it('a moment past the chunk media duration but before its end plays that chunk, at its share of the video', () => {
    const found = tl.chunkAt(CHUNKS, T0 + 7200);
    assert.ok(found, 'a chunk holds the moment');
    assert.equal(found.chunk.name, CHUNKS[1].name);
    // 7.2 s of 9.6 s of the day is three quarters of its 4 s of video.
    assert.ok(Math.abs(found.offsetS - 3) < 1e-9, `offset ${found.offsetS}`);
  });

  it('with no pictures dropped the offset is the wall offset', () => {
    const steady = [chunk('20261127T015407881Z_000002.h265', T0, T0 + 4000, 4)];
    const found = tl.chunkAt(steady, T0 + 2500);
    assert.equal(found?.offsetS, 2.5);
  });

  it('a chunk listed without ended_at (an older device) still ends at its start plus its duration', () => {
    const bare = [chunk('20261127T015407881Z_000002.h265', T0, null, 4)];
    assert.deepEqual(tl.chunkSpan(bare[0]), { from: T0, to: T0 + 4000 });
    assert.equal(tl.chunkAt(bare, T0 + 1000)?.offsetS, 1);
    assert.equal(tl.chunkAt(bare, T0 + 6000), null);
  });

  it('a moment in the small hole before a chunk plays it from its start; a moment after the newest has none yet', () => {
    const inHole = tl.chunkAt(CHUNKS, T0 - 100);
    assert.equal(inHole?.chunk.name, CHUNKS[1].name);
    assert.equal(inHole?.offsetS, 0);
    assert.equal(tl.chunkAt(CHUNKS, T0 + 9600 + 2000), null);
  });
});
