/**
 * The one Annex B start-code scan: the whole-buffer split (RTSP's packetizer and SDP), the streaming
 * AnnexBSplitter fed in any piece sizes, and the picture-count twin find the same NAL units.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AnnexBSplitter, forEachNal, nalUnitsOf, nextStartCode } from '../../../../lib/media/index.js';
import { seededRandom } from '../../../../lib/random/index.js';

/** Bytes made mostly of zeros and ones, so that start codes (3 and 4 bytes), trailing zeros and near misses are common. */
function startCodeHeavy(seed: number, length: number): Buffer {
  const r = seededRandom(seed);
  const b = Buffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = r.chance(0.7) ? (r.chance(0.6) ? 0 : 1) : Math.floor(r.range(2, 256));
  return b;
}

describe('Annex B scan', () => {
  it('finds 3- and 4-byte start codes, strips trailing zeros, keeps a one-byte NAL and ignores bytes before the first start code', () => {
    const b = Buffer.from([9, 9, 0, 0, 0, 1, 0x40, 0x01, 0, 0, 0, 1, 0x0a, 0, 0, 1, 0x42, 0x01, 0x77, 0, 0]);
    assert.equal(nextStartCode(b, 0), 3);
    assert.equal(nextStartCode(b, 4), 9);
    assert.deepEqual(
      nalUnitsOf(b).map((n) => n.toString('hex')),
      ['4001', '0a', '420177'],
    );
    assert.equal(nextStartCode(Buffer.from([0, 0]), 0), -1);
    assert.deepEqual(nalUnitsOf(Buffer.from([1, 2, 3])), []);
  });

  it('drops the last NAL when longer than the bound, as the streaming splitter does', () => {
    const b = Buffer.concat([Buffer.from([0, 0, 1, 0x40, 0x01, 0, 0, 1]), Buffer.alloc(100, 7)]);
    const ranges: number[][] = [];
    forEachNal(b, (at, end) => ranges.push([at, end]), 50);
    assert.deepEqual(ranges, [[3, 5]]);
  });

  it('gives the streaming splitter, fed in random pieces, the same NAL units as the whole buffer', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const stream = startCodeHeavy(seed, 64 + (seed % 7) * 97);
      const whole = nalUnitsOf(stream)
        .filter((n) => n.length >= 2)
        .map((n) => n.toString('hex'));
      const streamed: string[] = [];
      const splitter = new AnnexBSplitter((nal) => streamed.push(nal.toString('hex')));
      const r = seededRandom(seed + 1000);
      for (let at = 0; at < stream.length;) {
        const piece = Math.floor(r.range(1, 9));
        splitter.push(stream.subarray(at, at + piece));
        at += piece;
      }
      splitter.flush();
      assert.deepEqual(streamed, whole, `seed ${seed}`);
    }
  });
});
