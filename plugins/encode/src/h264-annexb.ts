import type { AccessUnit } from 'lookout/lib/media';

/** NAL unit types (ITU-T H.264 table 7-1) that matter for grouping pictures. */
export const H264_NAL = { IDR: 5, SEI: 6, SPS: 7, PPS: 8, AUD: 9 } as const;

export function h264NalType(nal: Uint8Array): number {
  return nal[0] & 0x1f;
}

const START_CODE = Buffer.from([0, 0, 0, 1]);

/** Types that, after a picture's slices, begin the next access unit (H.264 7.4.1.2.3). */
function beginsAccessUnit(type: number): boolean {
  return type === H264_NAL.AUD || type === H264_NAL.SPS || type === H264_NAL.PPS || type === H264_NAL.SEI || (type >= 14 && type <= 18);
}

/** first_mb_in_slice is ue(v) right after the one-byte header: 0 (a new picture) is the single bit 1. */
function firstSliceOfPicture(nal: Uint8Array): boolean {
  return nal.length > 1 && (nal[1] & 0x80) !== 0;
}

/**
 * Groups H.264 NAL units into access units (one picture each), as core's AccessUnitAssembler does for
 * H.265: a unit is complete when the next one begins. A keyframe is an IDR picture.
 */
export class H264AccessUnitAssembler {
  private nals: Buffer[] = [];
  private hasVcl = false;
  private keyframe = false;

  constructor(private readonly onAccessUnit: (au: AccessUnit) => void) {}

  push(nal: Buffer): void {
    const type = h264NalType(nal);
    const vcl = type >= 1 && type <= 5;
    const next = this.hasVcl && (beginsAccessUnit(type) || (vcl && firstSliceOfPicture(nal)));
    if (next) this.flush();
    this.nals.push(START_CODE, nal);
    if (vcl) {
      this.hasVcl = true;
      if (type === H264_NAL.IDR) this.keyframe = true;
    }
  }

  flush(): void {
    if (this.hasVcl) this.onAccessUnit({ data: Buffer.concat(this.nals), keyframe: this.keyframe });
    this.nals = [];
    this.hasVcl = false;
    this.keyframe = false;
  }
}
