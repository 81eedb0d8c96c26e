import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { H264Depacketizer, type AccessUnit } from '../../../../../hub/plugins/live-mp4/src/h264-depacketizer.js';

/** An RTP packet (RFC 3550 header, payload type 96) around a payload. */
function rtp(seq: number, time: number, payload: Buffer, marker = false): Buffer {
  const h = Buffer.alloc(12);
  h[0] = 0x80;
  h[1] = (marker ? 0x80 : 0) | 96;
  h.writeUInt16BE(seq & 0xffff, 2);
  h.writeUInt32BE(time >>> 0, 4);
  h.writeUInt32BE(0x1234, 8);
  return Buffer.concat([h, payload]);
}

const nal = (type: number, size: number, fill = 0xab) => Buffer.concat([Buffer.from([0x60 | type]), Buffer.alloc(size - 1, fill)]);

/** FU-A fragments of one NAL unit (RFC 6184 5.8). */
function fuA(unit: Buffer, pieces: number): Buffer[] {
  const body = unit.subarray(1);
  const step = Math.ceil(body.length / pieces);
  const out: Buffer[] = [];
  for (let i = 0; i < pieces; i++) {
    const header = (i === 0 ? 0x80 : 0) | (i === pieces - 1 ? 0x40 : 0) | (unit[0] & 0x1f);
    out.push(Buffer.concat([Buffer.from([(unit[0] & 0xe0) | 28, header]), body.subarray(i * step, (i + 1) * step)]));
  }
  return out;
}

function collect(): { aus: AccessUnit[]; d: H264Depacketizer } {
  const aus: AccessUnit[] = [];
  return { aus, d: new H264Depacketizer((au) => aus.push(au)) };
}

describe('H.264 RTP depacketizer', () => {
  it('joins single NAL units, STAP-A and FU-A into pictures at the marker bit', () => {
    const { aus, d } = collect();
    const sps = nal(7, 10);
    const pps = nal(8, 4);
    const idr = nal(5, 3000, 0x11);
    const stap = Buffer.concat([Buffer.from([24]), Buffer.from([0, sps.length]), sps, Buffer.from([0, pps.length]), pps]);
    d.push(rtp(1, 9000, stap));
    const frags = fuA(idr, 3);
    frags.forEach((f, i) => d.push(rtp(2 + i, 9000, f, i === frags.length - 1)));
    const p = nal(1, 500);
    d.push(rtp(5, 27000, p, true));
    assert.equal(aus.length, 2);
    assert.deepEqual(
      aus[0].nals.map((n) => n[0] & 0x1f),
      [7, 8, 5],
    );
    assert.ok(aus[0].nals[2].equals(idr), 'the FU-A fragments make the NAL unit again, header included');
    assert.equal(aus[0].keyframe, true);
    assert.equal(aus[0].rtpTime, 9000);
    assert.deepEqual([aus[1].keyframe, aus[1].rtpTime], [false, 27000]);
  });

  it('ends a picture when the timestamp changes without a marker', () => {
    const { aus, d } = collect();
    d.push(rtp(1, 100, nal(5, 20)));
    d.push(rtp(2, 200, nal(1, 20)));
    assert.equal(aus.length, 1);
    assert.equal(aus[0].rtpTime, 100);
  });

  it('drops a picture that lost a packet, and the pictures after it until a keyframe', () => {
    const { aus, d } = collect();
    d.push(rtp(1, 100, nal(5, 20), true));
    const frags = fuA(nal(1, 3000), 3);
    d.push(rtp(2, 200, frags[0]));
    d.push(rtp(4, 200, frags[2], true)); // 3 was lost
    d.push(rtp(5, 300, nal(1, 20), true)); // depends on the broken one
    d.push(rtp(6, 400, nal(5, 20), true));
    assert.deepEqual(
      aus.map((a) => a.rtpTime),
      [100, 400],
    );
    assert.equal(d.lost, 1);
  });

  it('ignores what is not RTP version 2, and skips CSRCs and header extensions', () => {
    const { aus, d } = collect();
    d.push(Buffer.from([0x00, 0x00, 0x00]));
    const withExt = rtp(1, 100, Buffer.concat([Buffer.from([0xbe, 0xde, 0x00, 0x01, 1, 2, 3, 4]), nal(5, 10)]), true);
    withExt[0] |= 0x10;
    d.push(withExt);
    assert.equal(aus.length, 1);
    assert.equal(aus[0].nals[0].length, 10);
  });
});
