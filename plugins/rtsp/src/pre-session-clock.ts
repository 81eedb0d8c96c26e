/**
 * The time a connection without a session may take: `budgetMs` of the client's own time, counted
 * while the server waits for it (no request yet, or a request arriving byte by byte), not while
 * the server answers (a DESCRIBE may wait seconds for the encoder's first keyframe). When the budget
 * is spent the connection is closed: idle or slow sockets cannot hold a slot for ever. A session
 * stops the clock; when the connection's last session ends it starts again with a full budget.
 */
export class PreSessionClock {
  private left: number;
  private timer: NodeJS.Timeout | undefined;
  private since = 0;

  constructor(
    private readonly budgetMs: number,
    private readonly onExpired: () => void,
    private readonly now: () => number = Date.now,
  ) {
    this.left = budgetMs;
  }

  /** The server waits for the client (and the connection has no session): the budget runs. */
  run(): void {
    if (this.timer) return;
    if (this.left <= 0) return this.onExpired();
    this.since = this.now();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.left = 0;
      this.onExpired();
    }, this.left);
    this.timer.unref();
  }

  /** The server is answering: the client's time does not run meanwhile. */
  pause(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left -= this.now() - this.since;
  }

  /** A session was made: the clock stops, and starts from a full budget if it is ever run again. */
  reset(): void {
    this.pause();
    this.left = this.budgetMs;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
