/**
 * Reconnect delays: exponential from `initialMs` up to `maxMs`, with jitter so that a fleet of
 * devices that lost the same broker does not hammer it back in lockstep.
 */
export interface BackoffOptions {
  /** First delay after a lost connection (default 250 ms). */
  initialMs?: number;
  /** Ceiling of the delay (default 30 s). */
  maxMs?: number;
  /** Growth per failed attempt (default 2). */
  factor?: number;
  /** Fraction of the delay drawn at random, 0..1 (default 0.2: the delay is 80 % to 100 % of the step). */
  jitter?: number;
}

export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private attempt = 0;

  constructor(
    options: BackoffOptions = {},
    private readonly random: () => number = Math.random,
  ) {
    this.initialMs = Math.max(1, options.initialMs ?? 250);
    this.maxMs = Math.max(this.initialMs, options.maxMs ?? 30_000);
    this.factor = Math.max(1, options.factor ?? 2);
    this.jitter = Math.min(1, Math.max(0, options.jitter ?? 0.2));
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    const step = Math.min(this.maxMs, this.initialMs * this.factor ** this.attempt);
    this.attempt++;
    return Math.round(step * (1 - this.jitter * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }
}
