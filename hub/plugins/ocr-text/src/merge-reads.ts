import type { StoredRead } from './device-reads.js';

export interface MergedRead {
  read: StoredRead;
  /** Reads of its track (1 for a read without a track). */
  reads_merged: number;
  /** When its track was last read. */
  last_read_at: string;
}

/**
 * One entry per track: its most confident read (the newest among equals), counting the track's
 * reads; a read without a track stands alone. Duplicates (the same read from the bus and from the
 * device's status) count once. Newest track first.
 */
export function mergeByTrack(reads: Iterable<StoredRead>): MergedRead[] {
  const seen = new Set<string>();
  const groups = new Map<string, MergedRead>();
  for (const read of reads) {
    if (seen.has(read.read_id)) continue;
    seen.add(read.read_id);
    const key = read.track_id === null ? `read:${read.read_id}` : `track:${read.track_id}`;
    const group = groups.get(key);
    if (!group) {
      groups.set(key, { read, reads_merged: 1, last_read_at: read.timestamp });
      continue;
    }
    group.reads_merged++;
    if (read.timestamp > group.last_read_at) group.last_read_at = read.timestamp;
    const better = read.confidence > group.read.confidence || (read.confidence === group.read.confidence && read.timestamp > group.read.timestamp);
    if (better) group.read = read;
  }
  return [...groups.values()].sort((a, b) => (a.last_read_at < b.last_read_at ? 1 : a.last_read_at > b.last_read_at ? -1 : 0));
}
