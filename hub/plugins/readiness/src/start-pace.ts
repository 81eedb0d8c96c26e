import type { PluginClock } from 'lookout/core';

/**
 * Spaces the starts of the checks the hub sets off itself (rounds, changes) at least 1/`perSecond`
 * apart. The concurrency bound alone does not bound their CPU: against a fleet whose tool servers
 * refuse at once (a thousand devices saying hello after a broker restart), each check ends in
 * milliseconds and the next starts, so READINESS_CONCURRENCY checks back to back took half the
 * hub's event loop for seconds and the ingest fell behind (issue 31).
 */
export class StartPace {
  private nextAt = -Infinity;
  private readonly waiting = new Map<NodeJS.Timeout, () => void>();

  constructor(
    private readonly perSecond: number,
    private readonly clock: Pick<PluginClock, 'now' | 'setTimeout' | 'clear'>,
  ) {}

  /** Resolves when the next start may go: at once when none went within the last 1/perSecond, else at its turn (or at `stop`). */
  turn(): Promise<void> {
    const now = this.clock.now();
    const at = Math.max(now, this.nextAt);
    this.nextAt = at + 1000 / this.perSecond;
    if (at <= now) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => {
        this.waiting.delete(timer);
        resolve();
      }, at - now);
      this.waiting.set(timer, resolve);
    });
  }

  /** Lets every waiting start go now (the caller checks whether it still should). */
  stop(): void {
    for (const [timer, resolve] of this.waiting) {
      this.clock.clear(timer);
      resolve();
    }
    this.waiting.clear();
  }
}
