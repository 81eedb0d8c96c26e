interface Flight<T> {
  work: Promise<T>;
  /** Aborted when every caller that may give up has, and no caller that may not waits. */
  cancel: AbortController;
  /** Callers with a signal still waiting. */
  waiting: number;
  /** A caller without a signal (a scheduled round, a check on change) waits: callers never cancel it. */
  pinned: boolean;
}

/**
 * Work in flight per key, joined by every caller that asks for the same key meanwhile, so that N
 * concurrent requests to check one device make one check. A caller with a signal stops waiting when
 * it aborts (and gets `gaveUp`); the work itself is cancelled only once every such caller has, and
 * no caller without a signal waits for it. A cancelled flight is forgotten at once, so a caller
 * that comes after starts afresh rather than joining work that will not count.
 */
export class JoinedWork<T> {
  private readonly flights = new Map<string, Flight<T>>();

  constructor(private readonly gaveUp: T) {}

  /** Joins the work in flight for `key`, or starts it with `start(cancel)`; `start`'s promise must not reject. */
  join(key: string, signal: AbortSignal | undefined, start: (cancel: AbortSignal) => Promise<T>): Promise<T> {
    if (signal?.aborted) return Promise.resolve(this.gaveUp);
    const flight = this.flights.get(key) ?? this.begin(key, start);
    if (!signal) {
      flight.pinned = true;
      return flight.work;
    }
    flight.waiting += 1;
    return new Promise<T>((resolve) => {
      const leave = () => {
        flight.waiting -= 1;
        if (flight.waiting === 0 && !flight.pinned) {
          if (this.flights.get(key) === flight) this.flights.delete(key);
          flight.cancel.abort(signal.reason);
        }
        resolve(this.gaveUp);
      };
      signal.addEventListener('abort', leave, { once: true });
      void flight.work.then((value) => {
        signal.removeEventListener('abort', leave);
        resolve(value);
      });
    });
  }

  private begin(key: string, start: (cancel: AbortSignal) => Promise<T>): Flight<T> {
    const cancel = new AbortController();
    const flight: Flight<T> = { work: start(cancel.signal), cancel, waiting: 0, pinned: false };
    this.flights.set(key, flight);
    void flight.work.finally(() => {
      if (this.flights.get(key) === flight) this.flights.delete(key);
    });
    return flight;
  }
}
