/** How far back the rate of a running transfer looks: long enough to smooth a bursty link, short enough to follow a change. */
const WINDOW_MS = 5000;

/** Bytes per second of a running transfer, from the progress reports of the last few seconds. */
export class TransferRate {
  private readonly samples: [number, number][] = [];

  add(atMs: number, bytes: number): void {
    this.samples.push([atMs, bytes]);
    while (this.samples.length > 2 && atMs - this.samples[0][0] > WINDOW_MS) this.samples.shift();
  }

  /** Null until two reports at least 200 ms apart. `atMs`: now, so that a transfer that stalled shows its rate falling. */
  perSecond(atMs?: number): number | null {
    const first = this.samples.find((s) => atMs === undefined || atMs - s[0] <= WINDOW_MS) ?? this.samples[this.samples.length - 1];
    const newest = this.samples[this.samples.length - 1];
    const last: [number, number] | undefined = newest && atMs !== undefined && atMs > newest[0] ? [atMs, newest[1]] : newest;
    if (!first || !last || last[0] - first[0] < 200) return null;
    return Math.max(0, Math.round(((last[1] - first[1]) * 1000) / (last[0] - first[0])));
  }
}

/** The wait before attempt `n + 1` after `n` failed ones: base · 2^(n-1), at most `max`. */
export function backoffMs(failedAttempts: number, base: number, max: number): number {
  return Math.min(max, base * 2 ** Math.max(0, failedAttempts - 1));
}
