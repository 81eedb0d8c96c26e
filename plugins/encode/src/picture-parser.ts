import { AccessUnitAssembler, AnnexBSplitter, type AccessUnit } from 'lookout/lib/media';

/** Capture times waiting for their pictures; more than this means the encoder lost count (it is reset). */
const MAX_PENDING_CAPTURES = 600;

/**
 * Turns one encoder run's byte stream into pictures with their capture times. The encoder keeps
 * capture order (no B-frames, no lookahead) and emits one picture per frame fed, so the n-th picture
 * out is the n-th frame in. A picture comes out when the next one begins (the Annex B stream marks
 * no end of a picture), one frame period after it was encoded; `flush` gives the last at the end.
 */
export class PictureParser {
  private readonly captures: number[] = [];
  private readonly splitter: AnnexBSplitter;
  private readonly assembler: AccessUnitAssembler;

  constructor(onPicture: (au: AccessUnit, capturedAtMs: number) => void, now: () => number = Date.now, codec: 'hevc' | 'h264' = 'hevc') {
    const take = (au: AccessUnit): void => onPicture(au, this.captures.shift() ?? now());
    this.assembler = new AccessUnitAssembler(take, codec);
    this.splitter = new AnnexBSplitter((nal) => this.assembler.push(nal));
  }

  /** A frame went into the encoder at this capture time. */
  frameFed(capturedAtMs: number): void {
    if (this.captures.length >= MAX_PENDING_CAPTURES) this.captures.length = 0;
    this.captures.push(capturedAtMs);
  }

  push(bytes: Buffer): void {
    this.splitter.push(bytes);
  }

  flush(): void {
    this.splitter.flush();
    this.assembler.flush();
  }
}
