/**
 * H.265 Annex B byte streams (what hardware encoders and `ffmpeg -f hevc` write): NAL units between
 * start codes, grouped into access units (one picture each). Used to cut chunks on keyframes, to
 * count keyframes from the stream itself and to keep a live tail that starts on a keyframe.
 */
import { endWithoutZeros, nextStartCode } from './annexb-scan.js';
import { HEVC_RULES, nalRulesOf, type AnnexBCodec, type NalRules } from './nal-rules.js';

/** NAL unit types (ITU-T H.265 table 7-1) the recorder and the live tail care about. */
export const HEVC_NAL = { VPS: 32, SPS: 33, PPS: 34, AUD: 35, PREFIX_SEI: 39 } as const;

export function nalType(nal: Uint8Array): number {
  return HEVC_RULES.type(nal, 0);
}

/** Video coding layer: the slices of a picture. */
export function isVcl(type: number): boolean {
  return HEVC_RULES.vcl(type);
}

/** Intra random access point (BLA, IDR, CRA): a picture a decoder can start from. */
export function isIrap(type: number): boolean {
  return HEVC_RULES.keyframe(type);
}

/**
 * Splits a byte stream fed in arbitrary pieces into NAL units (without their start codes). A NAL
 * is complete when the next start code arrives; `flush` gives the last one at the end of a stream.
 * Each byte is scanned once and copied a bounded number of times, whatever the piece sizes (a long
 * NAL arriving in small pieces must not cost quadratic work); a NAL longer than `maxNalBytes` is
 * not a picture anyone can use and is dropped (counted in `dropped`).
 */
export class AnnexBSplitter {
  private buf = Buffer.alloc(64 * 1024);
  private len = 0;
  /** Where the NAL in progress begins in `buf`; -1 before the first start code (or after a drop). */
  private nalStart = -1;
  /** Next position that may begin a start code. */
  private scanFrom = 0;
  dropped = 0;

  constructor(
    private readonly onNal: (nal: Buffer) => void,
    private readonly maxNalBytes = 32 * 1024 * 1024,
  ) {}

  push(data: Uint8Array): void {
    this.append(data);
    const b = this.buf;
    const end = this.len;
    let from = this.scanFrom;
    for (let i = nextStartCode(b, from, end); i >= 0; i = nextStartCode(b, from, end)) {
      if (this.nalStart >= 0) this.emit(b.subarray(this.nalStart, i));
      this.nalStart = from = i + 3;
    }
    // Nothing before end - 2 begins a start code; the last two bytes may, once more arrive.
    this.scanFrom = Math.max(from, end - 2);
    if (this.nalStart >= 0 && end - this.nalStart > this.maxNalBytes) {
      this.dropped++;
      this.nalStart = -1;
    }
    // Keep only the NAL in progress (or, before any start code, what may begin one).
    const keepFrom = this.nalStart >= 0 ? this.nalStart : Math.max(0, Math.min(this.scanFrom, end - 2));
    if (keepFrom > 0) {
      b.copy(b, 0, keepFrom, end);
      this.len = end - keepFrom;
      this.scanFrom -= keepFrom;
      if (this.nalStart >= 0) this.nalStart -= keepFrom;
    }
  }

  flush(): void {
    if (this.nalStart >= 0 && this.len > this.nalStart) this.emit(this.buf.subarray(this.nalStart, this.len));
    this.len = 0;
    this.nalStart = -1;
    this.scanFrom = 0;
  }

  private append(data: Uint8Array): void {
    const need = this.len + data.length;
    if (need > this.buf.length) {
      const grown = Buffer.alloc(Math.max(need, this.buf.length * 2));
      this.buf.copy(grown, 0, 0, this.len);
      this.buf = grown;
    }
    this.buf.set(data, this.len);
    this.len = need;
  }

  private emit(raw: Buffer): void {
    const end = endWithoutZeros(raw, 0, raw.length);
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

/**
 * Groups NAL units into access units (H.265 by default, H.264 with its rules); an access unit is
 * complete when the next one begins.
 */
export class AccessUnitAssembler {
  private nals: Buffer[] = [];
  private hasVcl = false;
  private keyframe = false;
  private readonly rules: NalRules;

  constructor(
    private readonly onAccessUnit: (au: AccessUnit) => void,
    codec: AnnexBCodec = 'hevc',
  ) {
    this.rules = nalRulesOf(codec);
  }

  push(nal: Buffer): void {
    const { rules } = this;
    const type = rules.type(nal, 0);
    const vcl = rules.vcl(type);
    const next = this.hasVcl && (rules.beginsAccessUnit(type) || (vcl && rules.firstSliceOfPicture(nal, 0, nal.length)));
    if (next) this.flush();
    this.nals.push(START_CODE, nal);
    if (vcl) {
      this.hasVcl = true;
      if (rules.keyframe(type)) this.keyframe = true;
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
