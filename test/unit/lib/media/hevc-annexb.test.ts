/**
 * H.265 Annex B parsing against real libx265 output: pictures and keyframes counted from the NAL
 * units agree with ffprobe's own count, however the bytes are cut into pieces.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { AccessUnitAssembler, AnnexBSplitter, accessUnitsOf, countPictures, isIrap, nalType, type AccessUnit } from '../../../../lib/media/index.js';

function encode(seconds: number, fps: number, gop: number): Buffer {
  return execFileSync('ffmpeg', [
    ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=160x120:rate=${fps}`, '-t', String(seconds)],
    ...['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', `keyint=${gop}:min-keyint=${gop}:scenecut=0:bframes=0:repeat-headers=1:log-level=error`],
    ...['-f', 'hevc', 'pipe:1'],
  ]);
}

function ffprobeKeyframes(stream: Buffer): { frames: number; keyframes: number } {
  const out = execFileSync('ffprobe', ['-v', 'error', '-f', 'hevc', '-show_entries', 'frame=key_frame', '-of', 'csv=p=0', 'pipe:0'], {
    input: stream,
  }).toString();
  const flags = out.trim().split('\n').filter(Boolean);
  return { frames: flags.length, keyframes: flags.filter((f) => f.startsWith('1')).length };
}

describe('H.265 Annex B parsing', () => {
  const stream = encode(3, 10, 10);

  it('counts the pictures and keyframes ffprobe counts', () => {
    assert.deepEqual(countPictures(stream), ffprobeKeyframes(stream));
    assert.deepEqual(countPictures(stream), { frames: 30, keyframes: 3 });
  });

  it('gives the same access units whatever the pieces the bytes arrive in', () => {
    const whole = accessUnitsOf(stream);
    for (const piece of [1, 3, 4, 777, 65536]) {
      const aus: AccessUnit[] = [];
      const assembler = new AccessUnitAssembler((au) => aus.push(au));
      const splitter = new AnnexBSplitter((nal) => assembler.push(nal));
      for (let i = 0; i < stream.length; i += piece) splitter.push(stream.subarray(i, i + piece));
      splitter.flush();
      assembler.flush();
      assert.equal(aus.length, whole.length, `pieces of ${piece} bytes`);
      assert.ok(aus.every((au, i) => au.data.equals(whole[i].data) && au.keyframe === whole[i].keyframe));
    }
  });

  it('starts every keyframe access unit with its parameter sets (a decoder can start there)', () => {
    const keyframes = accessUnitsOf(stream).filter((au) => au.keyframe);
    for (const au of keyframes) {
      const types: number[] = [];
      new AnnexBSplitter((nal) => types.push(nalType(nal))).push(Buffer.concat([au.data, Buffer.from([0, 0, 1])]));
      assert.deepEqual(types.slice(0, 3), [32, 33, 34]);
      assert.ok(types.some(isIrap));
    }
  });

  it('ignores bytes before the first start code and a truncated tail costs only the last picture', () => {
    const garbage = Buffer.concat([Buffer.from('not a start code'), stream]);
    assert.equal(countPictures(garbage).frames, 30);
    const cut = stream.subarray(0, stream.length - 50);
    const counted = countPictures(cut);
    assert.equal(counted.keyframes, 3);
    assert.ok(counted.frames >= 29 && counted.frames <= 30);
  });

  it('drops a NAL longer than the bound and goes on with the next ones', () => {
    const nals: Buffer[] = [];
    const splitter = new AnnexBSplitter((nal) => nals.push(nal), 1000);
    const startCode = Buffer.from([0, 0, 0, 1]);
    const huge = Buffer.alloc(5000, 0x41);
    splitter.push(Buffer.concat([startCode, Buffer.from([0x40, 0x01, 7])]));
    for (let i = 0; i < huge.length; i += 100) splitter.push(huge.subarray(i, i + 100)); // no start code for 5000 bytes
    splitter.push(Buffer.concat([startCode, Buffer.from([0x42, 0x01, 9]), startCode]));
    splitter.flush();
    assert.equal(splitter.dropped, 1);
    assert.deepEqual(nals, [Buffer.from([0x42, 0x01, 9])]);
  });

  it('finds nothing in bytes that are not H.265', () => {
    assert.deepEqual(countPictures(Buffer.alloc(1000, 7)), { frames: 0, keyframes: 0 });
    assert.deepEqual(countPictures(Buffer.alloc(0)), { frames: 0, keyframes: 0 });
  });
});
