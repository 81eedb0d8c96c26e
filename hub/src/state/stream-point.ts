/** Where a replica restarted from its saved cache resumes in the ingest stream (RedisStateStore saves it beside the cache). */
export interface ResumePoint {
  /** The stream id of the last entry the cache applied. */
  cursor: string;
  /** The batches applied by then (AppendedBatches, JSON). */
  applied: string;
  /** Dividing the apply: the members as of `cursor` (StreamMembership, JSON). */
  members?: string;
}

/** True when stream id `a` comes before `b` (`<ms>-<seq>`). */
export function streamIdBefore(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(Number);
  const [bm, bs] = b.split('-').map(Number);
  return am < bm || (am === bm && as < bs);
}
