/** Batches remembered per replica that wrote them: far more than it can have in flight or re-write after an outage. */
const BATCHES_PER_ORIGIN = 4096;
/** Replicas remembered (each process start is a new one): the least recently heard is forgotten first. */
const ORIGINS = 64;

/**
 * Which stream entries were applied already, by the replica that wrote them and its batch number.
 * A stream write can land twice: its reply lost with the connection, ioredis sends it again once
 * reconnected, or the relay keeps the batch and writes it again when Redis returns. Either copy
 * carries the same (origin, batch), so the second is known and skipped. Between a batch and its
 * copy its writer writes at most what it kept during the outage (up to 200 000 messages, a few
 * hundred entries of 500) and the writes it had in flight: a window of a few thousand entries per
 * origin suffices, and other replicas' traffic never pushes one origin's batches out of it.
 */
export class AppendedBatches {
  private readonly byOrigin = new Map<string, Set<number>>();

  /** Notes the batch; false if it was noted before. */
  firstTime(origin: string, batch: number): boolean {
    let seen = this.byOrigin.get(origin);
    if (seen === undefined) {
      if (this.byOrigin.size >= ORIGINS) this.byOrigin.delete(this.byOrigin.keys().next().value!);
      seen = new Set();
    } else {
      // Most recently heard last: the map's first key is the one to forget.
      this.byOrigin.delete(origin);
    }
    this.byOrigin.set(origin, seen);
    if (seen.has(batch)) return false;
    if (seen.size >= BATCHES_PER_ORIGIN) seen.delete(seen.values().next().value!);
    seen.add(batch);
    return true;
  }

  /**
   * The window as runs of consecutive numbers per writer, least recently heard first: saved beside
   * the cache (its cursor), so that a replica restarted from that cache still knows a copy of an
   * entry the cache holds. A writer numbers its batches one after the other: a run or two each.
   */
  toJSON(): Record<string, [number, number][]> {
    const out: Record<string, [number, number][]> = {};
    for (const [origin, seen] of this.byOrigin) {
      const runs: [number, number][] = [];
      for (const n of seen) {
        const last = runs.at(-1);
        if (last && n === last[1] + 1) last[1] = n;
        else runs.push([n, n]);
      }
      out[origin] = runs;
    }
    return out;
  }

  /** A window toJSON wrote (read from Redis): what is not one is left out, and no writer brings more than its window. */
  static from(saved: unknown): AppendedBatches {
    const batches = new AppendedBatches();
    if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) return batches;
    for (const [origin, runs] of Object.entries(saved).slice(-ORIGINS)) {
      if (!Array.isArray(runs)) continue;
      // The newest BATCHES_PER_ORIGIN numbers, then noted oldest first, as they were heard.
      const kept: number[] = [];
      for (let i = runs.length - 1; i >= 0 && kept.length < BATCHES_PER_ORIGIN; i--) {
        const [from, to] = (Array.isArray(runs[i]) ? runs[i] : []) as unknown[];
        if (typeof from !== 'number' || typeof to !== 'number' || !Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from > to) continue;
        for (let n = to; n >= from && kept.length < BATCHES_PER_ORIGIN; n--) kept.push(n);
      }
      for (let i = kept.length - 1; i >= 0; i--) batches.firstTime(origin, kept[i]);
    }
    return batches;
  }
}
