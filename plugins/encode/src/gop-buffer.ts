import type { EncodedPicture } from './service.js';

/**
 * The pictures since the latest keyframe: what a new live client, a snapshot or a chunk cut starts
 * from. Bounded in bytes: a GOP that outgrows the bound (a huge gop at a high bitrate) is let go and
 * the buffer waits for the next keyframe, since a GOP without its keyframe decodes to nothing.
 */
export class GopBuffer {
  private pictures: EncodedPicture[] = [];
  private bytes = 0;
  private overflowed = false;

  constructor(private readonly maxBytes: number) {}

  add(picture: EncodedPicture): void {
    if (picture.keyframe) {
      this.pictures = [];
      this.bytes = 0;
      this.overflowed = false;
    } else if (this.overflowed || this.pictures.length === 0) return;
    if (this.bytes + picture.data.length > this.maxBytes) {
      this.pictures = [];
      this.bytes = 0;
      this.overflowed = true;
      return;
    }
    this.pictures.push(picture);
    this.bytes += picture.data.length;
  }

  /** A copy: callers may keep it while new pictures arrive. */
  snapshot(): EncodedPicture[] {
    return [...this.pictures];
  }

  clear(): void {
    this.pictures = [];
    this.bytes = 0;
    this.overflowed = false;
  }

  get byteLength(): number {
    return this.bytes;
  }
}
