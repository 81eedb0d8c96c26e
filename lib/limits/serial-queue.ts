/**
 * Runs tasks one at a time. A back-end reuses one input buffer across frames, so a second detect()
 * must wait for the first instead of overwriting the tensor it is reading.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task, task);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Resolves once everything queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
