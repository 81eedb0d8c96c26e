/** GopTail on real libx265 output: the latest GOP, decodable on its own, in any piece size, bounded. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { accessUnitsOf } from '../../../../../lib/media/hevc-annexb.js';
import { jpegFromHevc } from '../../../../../lib/media/jpeg-from-hevc.js';
import { GopTail } from '../../../../../hub/plugins/snapshots/src/gop-tail.js';
import { newestChunk } from '../../../../../hub/plugins/snapshots/src/ssh-step.js';

/** 2 s at 5 fps, a keyframe every 5 pictures; libx265 writes VPS/SPS/PPS only once, at the start. */
const stream = execFileSync('ffmpeg', [
  ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=5', '-t', '2'],
  ...['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'keyint=5:min-keyint=5:scenecut=0:log-level=error', '-f', 'hevc', 'pipe:1'],
]);

function widthOf(jpeg: Buffer): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=width', '-of', 'csv=p=0', 'pipe:0'], { input: jpeg }).toString().trim());
}

function feed(tail: GopTail, bytes: Buffer, piece: number): void {
  for (let i = 0; i < bytes.length; i += piece) tail.push(bytes.subarray(i, i + piece));
}

describe('GopTail', () => {
  it('keeps the latest GOP with the parameter sets in front, whatever the piece size', async () => {
    for (const piece of [1, 7, 188, 65_536]) {
      let keyframes = 0;
      const tail = new GopTail(1 << 20, () => keyframes++);
      feed(tail, stream, piece);
      tail.flush();
      const gop = tail.snapshot()!;
      assert.equal(keyframes, 2, `piece ${piece}`);
      assert.equal(gop.pictures, 5, `piece ${piece}`);
      assert.equal(gop.truncated, false);
      const first = accessUnitsOf(gop.stream)[0];
      assert.equal(first.keyframe, true);
      // VPS, SPS, PPS (32, 33, 34) lead, although the second GOP of the stream carries none.
      assert.deepEqual(
        [...first.data.subarray(4, 5)].map((b) => (b >> 1) & 0x3f),
        [32],
      );
    }
    const tail = new GopTail(1 << 20);
    tail.push(stream);
    tail.flush();
    const jpeg = await jpegFromHevc(tail.snapshot()!.stream, { width: 96, quality: 50, timeoutMs: 10_000 });
    assert.equal(widthOf(jpeg), 96);
  });

  it('has nothing before the first keyframe, nor from a stream joined mid-GOP until the next one', () => {
    const aus = accessUnitsOf(stream);
    const tail = new GopTail(1 << 20);
    assert.equal(tail.snapshot(), null);
    // Pictures 1..4 of the first GOP (no keyframe), then the second GOP's keyframe.
    for (const au of aus.slice(1, 5)) tail.push(au.data);
    assert.equal(tail.snapshot(), null);
    // A NAL is complete at the next start code, a picture at the next picture's first NAL: the
    // keyframe is whole once the two pictures after it began.
    for (const au of aus.slice(5, 8)) tail.push(au.data);
    assert.equal(tail.snapshot()?.pictures, 1);
    assert.equal(accessUnitsOf(tail.snapshot()!.stream)[0].keyframe, true);
  });

  it('stops a GOP at the byte bound, and drops a keyframe larger than it', () => {
    const aus = accessUnitsOf(stream);
    const bound = aus[0].data.length + aus[1].data.length + 10;
    const tail = new GopTail(bound);
    tail.push(stream);
    tail.flush();
    const gop = tail.snapshot()!;
    assert.equal(gop.truncated, true);
    assert.ok(gop.stream.length <= bound, `${gop.stream.length} <= ${bound}`);
    assert.ok(gop.pictures >= 1 && gop.pictures < 5);
    const tiny = new GopTail(100);
    tiny.push(stream);
    tiny.flush();
    assert.equal(tiny.snapshot(), null);
  });

  it('counts bytes without a complete picture, for its reader to cut an endless one', () => {
    const tail = new GopTail(1 << 20);
    tail.push(Buffer.alloc(50_000, 0x55));
    assert.equal(tail.bytesSincePicture, 50_000);
    tail.push(stream);
    assert.ok(tail.bytesSincePicture < stream.length);
  });
});

describe('newestChunk', () => {
  it('takes the greatest complete chunk name, never a .part or an empty file', () => {
    const f = (name: string, size = 10, mtimeMs = 0) => ({ name, size, mtimeMs });
    const files = [
      f('20260101T000000000Z_000001.h265'),
      f('20260101T000100000Z_000002.h265'),
      f('.20260101T000200000Z_000003.h265.part', 99),
      f('20260101T000300000Z_000004.h265', 0),
      f('20260101T000100000Z_000002.json'),
      f('recent_manifest.jsonl'),
    ];
    assert.equal(newestChunk(files)?.name, '20260101T000100000Z_000002.h265');
    assert.equal(newestChunk([]), undefined);
  });
});
