/**
 * Fragmented MP4 (ISO BMFF, as Media Source Extensions take it) of one H.264 track: an init
 * segment (ftyp, moov with the avcC of the stream's SPS and PPS) and one fragment (moof + mdat) per
 * picture, so a browser shows each picture as it arrives. The pictures are copied, never decoded.
 */

const TIMESCALE = 90_000;

function box(type: string, ...payload: Buffer[]): Buffer {
  const size = 8 + payload.reduce((n, b) => n + b.length, 0);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(size, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, ...payload]);
}

function fullBox(type: string, version: number, flags: number, ...payload: Buffer[]): Buffer {
  const vf = Buffer.alloc(4);
  vf.writeUInt32BE(((version & 0xff) << 24) | (flags & 0xffffff), 0);
  return box(type, vf, ...payload);
}

const u32 = (...values: number[]): Buffer => {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
};
const u16 = (...values: number[]): Buffer => {
  const b = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => b.writeUInt16BE(v & 0xffff, i * 2));
  return b;
};
const MATRIX = u32(0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000);

/** `avc1.PPCCLL`, the codecs parameter MSE needs, from the SPS's profile, constraints and level. */
export function codecOf(sps: Buffer): string {
  return `avc1.${sps.subarray(1, 4).toString('hex')}`;
}

export function initSegment(sps: Buffer, pps: Buffer, width: number, height: number): Buffer {
  const ftyp = box('ftyp', Buffer.from('iso5', 'latin1'), u32(512), Buffer.from('iso5iso6avc1mp41', 'latin1'));
  const mvhd = fullBox('mvhd', 0, 0, u32(0, 0, 1000, 0, 0x00010000), u16(0x0100, 0), u32(0, 0), MATRIX, Buffer.alloc(24), u32(2));
  const tkhd = fullBox('tkhd', 0, 3, u32(0, 0, 1, 0, 0, 0, 0), u16(0, 0, 0, 0), MATRIX, u32(width << 16, height << 16));
  const mdhd = fullBox('mdhd', 0, 0, u32(0, 0, TIMESCALE, 0), u16(0x55c4, 0));
  const hdlr = fullBox('hdlr', 0, 0, u32(0), Buffer.from('vide', 'latin1'), Buffer.alloc(12), Buffer.from('Lookout live\0', 'latin1'));
  const avcC = box('avcC', Buffer.from([1, sps[1], sps[2], sps[3], 0xff, 0xe1]), u16(sps.length), sps, Buffer.from([1]), u16(pps.length), pps);
  const avc1 = box(
    'avc1',
    Buffer.alloc(6),
    u16(1, 0, 0),
    Buffer.alloc(12),
    u16(width, height),
    u32(0x00480000, 0x00480000, 0),
    u16(1),
    Buffer.alloc(32),
    u16(0x0018, 0xffff),
    avcC,
  );
  const stbl = box(
    'stbl',
    fullBox('stsd', 0, 0, u32(1), avc1),
    fullBox('stts', 0, 0, u32(0)),
    fullBox('stsc', 0, 0, u32(0)),
    fullBox('stsz', 0, 0, u32(0, 0)),
    fullBox('stco', 0, 0, u32(0)),
  );
  const dinf = box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1)));
  const minf = box('minf', fullBox('vmhd', 0, 1, u16(0, 0, 0, 0)), dinf, stbl);
  const trak = box('trak', tkhd, box('mdia', mdhd, hdlr, minf));
  const mvex = box('mvex', fullBox('trex', 0, 0, u32(1, 1, 0, 0, 0)));
  return Buffer.concat([ftyp, box('moov', mvhd, trak, mvex)]);
}

/** Seconds from NTP's epoch (1900) to Unix's (1970). */
const NTP_UNIX_OFFSET_S = 2_208_988_800;
/** prft flags (ISO/IEC 14496-12:2020 8.16.5): the NTP time is when the picture was captured. */
const PRFT_CAPTURED = 24;

/**
 * A ProducerReferenceTimeBox (prft, version 1) for track 1: the wall-clock time `wallMs` (Unix ms,
 * written as a 64-bit NTP timestamp) at which the picture at `mediaTime` (90 kHz ticks, the
 * fragment's decode time) was captured. It goes just before the moof it describes.
 */
export function prft(wallMs: number, mediaTime: number): Buffer {
  const seconds = Math.floor(wallMs / 1000);
  const fraction = Math.floor(((wallMs - seconds * 1000) / 1000) * 2 ** 32);
  return fullBox('prft', 1, PRFT_CAPTURED, u32(1, seconds + NTP_UNIX_OFFSET_S, fraction, Math.floor(mediaTime / 2 ** 32), mediaTime % 2 ** 32));
}

/**
 * One picture as a fragment: `decodeTime` and `duration` in 90 kHz ticks from the stream's start;
 * with `capturedAtMs` (Unix ms) a prft saying when the picture was captured comes first.
 */
export function fragment(sequence: number, decodeTime: number, duration: number, nals: Buffer[], keyframe: boolean, capturedAtMs?: number): Buffer {
  const samples = nals.map((n) => Buffer.concat([u32(n.length), n]));
  const sampleSize = samples.reduce((s, b) => s + b.length, 0);
  const mdat = box('mdat', ...samples);
  const tfdt = fullBox('tfdt', 1, 0, u32(Math.floor(decodeTime / 2 ** 32), decodeTime % 2 ** 32));
  // sample_depends_on 2 (a keyframe) or 1 with sample_is_non_sync_sample.
  const flags = keyframe ? 0x02000000 : 0x01010000;
  const trunOf = (dataOffset: number) => fullBox('trun', 0, 0x000001 | 0x000100 | 0x000200 | 0x000400, u32(1, dataOffset, duration, sampleSize, flags));
  const tfhd = fullBox('tfhd', 0, 0x020000, u32(1));
  const mfhd = fullBox('mfhd', 0, 0, u32(sequence));
  const moofSize = box('moof', mfhd, box('traf', tfhd, tfdt, trunOf(0))).length;
  const moof = box('moof', mfhd, box('traf', tfhd, tfdt, trunOf(moofSize + 8)));
  return Buffer.concat(capturedAtMs === undefined ? [moof, mdat] : [prft(capturedAtMs, decodeTime), moof, mdat]);
}
