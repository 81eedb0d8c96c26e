/**
 * The addon's Annex B picture count against its TypeScript twin and against the assembler that
 * groups pictures for the recorder (lib/media's AccessUnitAssembler, with H.265's or H.264's rules),
 * on real libx265/libx264 streams cut at every kind of place, on garbage, and with an over-long last
 * NAL: the sidecars' keyframe_count means the same whichever counts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { AccessUnitAssembler, AnnexBSplitter, countPicturesTwin, countPicturesWith, type AnnexBCodec } from '../../../lib/media/index.js';
import { seededRandom } from '../../../lib/random/index.js';
import { addonUnderTest, randomBytes, toolEnv } from './addon-under-test.js';

const addon = addonUnderTest();

function encode(codec: AnnexBCodec): Buffer {
  const video =
    codec === 'hevc'
      ? ['-c:v', 'libx265', '-x265-params', 'keyint=10:min-keyint=10:scenecut=0:bframes=0:repeat-headers=1:log-level=error', '-f', 'hevc']
      : ['-c:v', 'libx264', '-g', '10', '-keyint_min', '10', '-sc_threshold', '0', '-bf', '0', '-f', 'h264'];
  return execFileSync(
    'ffmpeg',
    ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=96x64:rate=10', '-t', '3', '-preset', 'ultrafast', ...video, 'pipe:1'],
    { env: toolEnv() },
  );
}

/** The count as the recorder's assemblers see it: every access unit, keyframes among them. */
function assembled(stream: Uint8Array, codec: AnnexBCodec, maxNalBytes?: number) {
  const count = { frames: 0, keyframes: 0 };
  const onAu = (au: { keyframe: boolean }) => {
    count.frames++;
    if (au.keyframe) count.keyframes++;
  };
  const assembler = new AccessUnitAssembler(onAu, codec);
  const splitter = new AnnexBSplitter((nal) => assembler.push(nal), maxNalBytes);
  splitter.push(stream);
  splitter.flush();
  assembler.flush();
  return count;
}

function agree(stream: Uint8Array, codec: AnnexBCodec, what: string, maxNalBytes?: number) {
  const native = countPicturesWith(addon, stream, codec, maxNalBytes);
  assert.deepEqual(native, countPicturesTwin(stream, codec, maxNalBytes), `${what}: native vs twin`);
  assert.deepEqual(native, assembled(stream, codec, maxNalBytes), `${what}: native vs assemblers`);
  return native;
}

for (const codec of ['hevc', 'h264'] as const) {
  describe(`${codec} Annex B picture count`, () => {
    const stream = encode(codec);

    it('counts 30 pictures and 3 keyframes, as the assemblers do', () => {
      assert.deepEqual(agree(stream, codec, 'whole'), { frames: 30, keyframes: 3 });
    });

    it('agrees on streams truncated anywhere and with garbage before them', () => {
      const rnd = seededRandom(codec === 'hevc' ? 19 : 20);
      const cuts = [0, 1, 2, 3, 4, 5, stream.length - 1, stream.length - 2, ...Array.from({ length: 40 }, () => Math.floor(rnd.next() * stream.length))];
      for (const cut of cuts) agree(stream.subarray(0, cut), codec, `first ${cut} bytes`);
      for (const cut of cuts.slice(0, 20)) agree(stream.subarray(cut), codec, `from byte ${cut}`);
      agree(Buffer.concat([Buffer.from('not a start code'), stream]), codec, 'leading garbage');
      agree(Buffer.concat([stream, Buffer.alloc(9)]), codec, 'trailing zeros');
    });

    it('drops an over-long last NAL as the splitter does', () => {
      for (const max of [0, 100, 5000]) agree(stream, codec, `max NAL ${max}`, max);
    });
  });
}

describe('Annex B picture count on bytes that are not video', () => {
  it('agrees on random bytes, start codes alone, empty and tiny inputs', () => {
    const rnd = seededRandom(21);
    const next = () => rnd.next();
    for (const codec of ['hevc', 'h264'] as const) {
      for (const input of [
        new Uint8Array(0),
        Uint8Array.of(0),
        Uint8Array.of(0, 0, 1),
        Uint8Array.of(0, 0, 1, 0x40),
        Uint8Array.of(0, 0, 1, 0x26, 0x01, 0x80, 0, 0, 1, 0x02, 0x01, 0x80),
        randomBytes(5000, next),
        // Start-code-dense random bytes reach every NAL type.
        Uint8Array.from({ length: 8000 }, () => [0, 0, 1, Math.floor(next() * 256)][Math.floor(next() * 4)]),
      ]) {
        agree(input, codec, `${input.length} bytes`);
      }
    }
  });

  it('refuses a codec it does not know in the addon itself', () => {
    assert.throws(() => addon.countPictures(new Uint8Array(4), 2 as 0, 10), RangeError);
    assert.throws(() => addon.countPictures([0, 0, 1] as unknown as Uint8Array, 0, 10), TypeError);
  });
});
