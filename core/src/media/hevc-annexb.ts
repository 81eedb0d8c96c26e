/**
 * H.265 Annex B byte streams (what hardware encoders and `ffmpeg -f hevc` write): NAL units between
 * start codes, grouped into access units (one picture each). Used to cut chunks on keyframes, to
 * count keyframes from the stream itself and to keep a live tail that starts on a keyframe.
 */

/** NAL unit types (ITU-T H.265 table 7-1) the recorder and the live tail care about. */
export const HEVC_NAL = { VPS: 32, SPS: 33, PPS: 34, AUD: 35, PREFIX_SEI: 39 } as const;

export function nalType(nal: Uint8Array): number {
  return (nal[0] >> 1) & 0x3f;
}

/** Video coding layer: the slices of a picture. */
export function isVcl(type: number): boolean {
  return type < 32;
}

/** Intra random access point (BLA, IDR, CRA): a picture a decoder can start from. */
export function isIrap(type: number): boolean {
  return type >= 16 && type <= 23;
}

/** first_slice_segment_in_pic_flag: the first bit after the two-byte NAL header of a slice. */
function firstSliceOfPicture(nal: Uint8Array): boolean {
  return nal.length > 2 && (nal[2] & 0x80) !== 0;
}

/** Types that, after a picture's slices, begin the next access unit (H.265 7.4.2.4.4). */
function beginsAccessUnit(type: number): boolean {
  return type === HEVC_NAL.AUD || (type >= 32 && type <= 34) || type === HEVC_NAL.PREFIX_SEI || (type >= 41 && type <= 44) || (type >= 48 && type <= 55);
}

/**
 * Splits a byte stream fed in arbitrary pieces into NAL units (without their start codes). A NAL
 * is complete when the next start code arrives; `flush` gives the last one at the end of a stream.
 */
export class AnnexBSplitter {
  private pending = Buffer.alloc(0);
  private started = false;

  constructor(private readonly onNal: (nal: Buffer) => void) {}

  push(data: Uint8Array): void {
    const buf = this.pending.length === 0 ? Buffer.from(data) : Buffer.concat([this.pending, data]);
    let nalStart = -1;
    let i = 0;
    let consumed = 0;
    // A start code is 00 00 01 (a 4-byte 00 00 00 01 leaves a trailing zero that is trimmed below).
    while (i + 2 < buf.length) {
      if (buf[i + 2] > 1) {
        i += 3;
        continue;
      }
      if (buf[i] === 0 && buf[i + 1] === 0 && buf[i + 2] === 1) {
        if (nalStart >= 0 || this.started) this.emit(buf.subarray(nalStart >= 0 ? nalStart : consumed, i));
        this.started = true;
        nalStart = i + 3;
        consumed = nalStart;
        i += 3;
      } else i++;
    }
    // Bytes before the first start code are not a NAL; only a possible start code's beginning is kept.
    this.pending = Buffer.from(this.started ? buf.subarray(nalStart >= 0 ? nalStart : consumed) : buf.subarray(Math.max(0, buf.length - 2)));
  }

  flush(): void {
    if (this.started && this.pending.length > 0) this.emit(this.pending);
    this.pending = Buffer.alloc(0);
    this.started = false;
  }

  private emit(raw: Buffer): void {
    let end = raw.length;
    while (end > 0 && raw[end - 1] === 0) end--; // trailing_zero_8bits and the 4-byte start code's first zero
    if (end >= 2) this.onNal(Buffer.from(raw.subarray(0, end)));
  }
}

/** One picture with the parameter sets and SEI before it, as Annex B bytes (4-byte start codes). */
export interface AccessUnit {
  data: Buffer;
  /** An IRAP picture: a decoder (and a chunk) can start here. */
  keyframe: boolean;
}

const START_CODE = Buffer.from([0, 0, 0, 1]);

/** Groups NAL units into access units; an access unit is complete when the next one begins. */
export class AccessUnitAssembler {
  private nals: Buffer[] = [];
  private hasVcl = false;
  private keyframe = false;

  constructor(private readonly onAccessUnit: (au: AccessUnit) => void) {}

  push(nal: Buffer): void {
    const type = nalType(nal);
    const next = this.hasVcl && (beginsAccessUnit(type) || (isVcl(type) && firstSliceOfPicture(nal)));
    if (next) this.flush();
    this.nals.push(START_CODE, nal);
    if (isVcl(type)) {
      this.hasVcl = true;
      if (isIrap(type)) this.keyframe = true;
    }
  }

  /** Emits the access unit in progress (at the end of a stream). */
  flush(): void {
    if (this.hasVcl) this.onAccessUnit({ data: Buffer.concat(this.nals), keyframe: this.keyframe });
    this.nals = [];
    this.hasVcl = false;
    this.keyframe = false;
  }
}

/** Parses a whole Annex B buffer into its access units. */
export function accessUnitsOf(stream: Uint8Array): AccessUnit[] {
  const out: AccessUnit[] = [];
  const assembler = new AccessUnitAssembler((au) => out.push(au));
  const splitter = new AnnexBSplitter((nal) => assembler.push(nal));
  splitter.push(stream);
  splitter.flush();
  assembler.flush();
  return out;
}

/** Pictures and keyframes of an Annex B stream, counted from its NAL units. */
export function countPictures(stream: Uint8Array): { frames: number; keyframes: number } {
  let frames = 0;
  let keyframes = 0;
  for (const au of accessUnitsOf(stream)) {
    frames++;
    if (au.keyframe) keyframes++;
  }
  return { frames, keyframes };
}
