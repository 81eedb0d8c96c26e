import type { OcrRead } from '../service.js';

/**
 * The reads a status shows: the newest ones, and per track the most confident read (reads of one
 * track are merged: a plate seen over many frames is read best once it is close and sharp). Both
 * bounded; the track whose read is oldest leaves first.
 */
export class ReadStore {
  private readonly recent: OcrRead[] = [];
  private readonly tracks = new Map<number, OcrRead>();

  constructor(
    private readonly maxRecent = 32,
    private readonly maxTracks = 64,
  ) {}

  add(read: OcrRead): void {
    this.recent.unshift(read);
    if (this.recent.length > this.maxRecent) this.recent.length = this.maxRecent;
    if (read.track_id === null) return;
    const best = this.tracks.get(read.track_id);
    // Re-inserted so that the map's order is by the track's newest read.
    this.tracks.delete(read.track_id);
    this.tracks.set(read.track_id, best && best.confidence >= read.confidence ? best : read);
    if (this.tracks.size > this.maxTracks) this.tracks.delete(this.tracks.keys().next().value!);
  }

  /** Newest first. */
  recentReads(): OcrRead[] {
    return [...this.recent];
  }

  /** The most confident read of each track, the track seen last first. */
  bestByTrack(): OcrRead[] {
    return [...this.tracks.values()].reverse();
  }
}
