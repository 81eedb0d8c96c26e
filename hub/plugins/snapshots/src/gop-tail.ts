import { AccessUnitAssembler, AnnexBSplitter, HEVC_NAL, nalType, type AccessUnit } from 'lookout/lib/media';

/** The pictures from the latest keyframe on, ready for a decoder. */
export interface GopSnapshot {
  /** Annex B bytes: the parameter sets, the keyframe, every picture after it. */
  stream: Buffer;
  pictures: number;
  /** When the newest picture of it arrived (epoch ms). */
  lastPictureAt: number;
  /** The GOP outgrew the byte bound: pictures past it were not kept, so the newest kept one is older. */
  truncated: boolean;
}

const START_CODE = Buffer.from([0, 0, 0, 1]);
const PARAMETER_SETS = [HEVC_NAL.VPS, HEVC_NAL.SPS, HEVC_NAL.PPS] as const;

/**
 * Keeps the latest GOP of an H.265 Annex B stream fed in any piece size (a live stream, or a
 * recording chunk read whole): a decoder given `snapshot().stream` decodes up to the newest picture.
 * The latest VPS/SPS/PPS are put in front of the keyframe, because an encoder that sends them only
 * once (libx265 without repeat-headers) leaves a later GOP undecodable on its own. Bounded: past
 * `maxBytes` a GOP stops growing until the next keyframe.
 */
export class GopTail {
  private readonly params = new Map<number, Buffer>();
  private gop: Buffer[] = [];
  private gopBytes = 0;
  private pictures = 0;
  private truncated = false;
  private lastPictureAt = 0;
  private sincePicture = 0;
  private readonly splitter: AnnexBSplitter;
  private readonly assembler: AccessUnitAssembler;

  constructor(
    private readonly maxBytes: number,
    private readonly onKeyframe?: () => void,
    private readonly now: () => number = Date.now,
  ) {
    this.assembler = new AccessUnitAssembler((au) => this.onAccessUnit(au));
    this.splitter = new AnnexBSplitter((nal) => {
      // The assembler first: a parameter set may end the previous picture, whose GOP must keep the old ones.
      this.assembler.push(nal);
      const type = nalType(nal);
      if ((PARAMETER_SETS as readonly number[]).includes(type)) this.params.set(type, nal);
    });
  }

  push(data: Uint8Array): void {
    this.sincePicture += data.length;
    this.splitter.push(data);
  }

  /**
   * Bytes fed since the last complete picture: the splitter and the assembler hold them. A stream
   * that never completes a picture (no start codes, endless SEI) is cut by its reader past a bound.
   */
  get bytesSincePicture(): number {
    return this.sincePicture;
  }

  /** The end of the stream: its last picture is complete. */
  flush(): void {
    this.splitter.flush();
    this.assembler.flush();
  }

  /** Null before the first keyframe. */
  snapshot(): GopSnapshot | null {
    if (this.pictures === 0) return null;
    return { stream: Buffer.concat(this.gop, this.gopBytes), pictures: this.pictures, lastPictureAt: this.lastPictureAt, truncated: this.truncated };
  }

  private onAccessUnit(au: AccessUnit): void {
    this.sincePicture = 0;
    if (au.keyframe) {
      const prefix = PARAMETER_SETS.flatMap((t) => {
        const nal = this.params.get(t);
        return nal ? [START_CODE, nal] : [];
      });
      const bytes = prefix.reduce((n, b) => n + b.length, 0) + au.data.length;
      if (bytes > this.maxBytes) {
        // A keyframe alone past the bound: nothing of this GOP can be kept.
        this.reset();
        return;
      }
      this.gop = [...prefix, au.data];
      this.gopBytes = bytes;
      this.pictures = 1;
      this.truncated = false;
      this.lastPictureAt = this.now();
      this.onKeyframe?.();
      return;
    }
    if (this.pictures === 0 || this.truncated) return;
    if (this.gopBytes + au.data.length > this.maxBytes) {
      this.truncated = true;
      return;
    }
    this.gop.push(au.data);
    this.gopBytes += au.data.length;
    this.pictures++;
    this.lastPictureAt = this.now();
  }

  private reset(): void {
    this.gop = [];
    this.gopBytes = 0;
    this.pictures = 0;
    this.truncated = false;
  }
}
