import { faults, type SoapFault } from '../soap/soap-fault.js';
import type { EventMessage } from './event-message.js';
import type { TopicFilter } from './topics.js';

type Wake = 'event' | 'timeout' | 'aborted' | 'superseded' | 'ended';

interface Waiter {
  settle(why: Wake): void;
}

/** The fault a request to a subscription that is gone (unsubscribed, expired, never existed) answers. */
export const subscriptionGone = (id: string): SoapFault => faults.invalidArg(`no subscription "${id}" (unknown, unsubscribed or expired)`);

/**
 * One pull-point subscription: its own bounded queue (the oldest message is dropped when full) and
 * at most one held PullMessages.
 */
export class PullPoint {
  private readonly queue: EventMessage[] = [];
  private waiter: Waiter | null = null;
  private wakeScheduled = false;
  dropped = 0;

  constructor(
    readonly id: string,
    readonly url: string,
    public terminationMs: number,
    private readonly filter: TopicFilter | undefined,
    private readonly queueLimit: number,
    /** Who created it (user and remote address): a client's subscriptions are bounded. */
    readonly client = '',
  ) {}

  get queued(): number {
    return this.queue.length;
  }

  push(messages: EventMessage[]): void {
    const wanted = this.filter ? messages.filter((m) => this.filter!(m.topic)) : messages;
    if (!wanted.length) return;
    this.queue.push(...wanted);
    const excess = this.queue.length - this.queueLimit;
    if (excess > 0) {
      this.queue.splice(0, excess);
      this.dropped += excess;
    }
    // Woken on the next turn, not at once, so that the messages of one detection batch leave in one answer.
    if (this.waiter && !this.wakeScheduled) {
      this.wakeScheduled = true;
      setImmediate(() => {
        this.wakeScheduled = false;
        this.waiter?.settle('event');
      });
    }
  }

  /**
   * Up to `limit` messages: at once when some are queued, else held until one arrives or `timeoutMs`
   * passes (then none). An aborted request (the client went away) takes nothing, so nothing is lost;
   * a second PullMessages answers the held one with what is queued (nothing). Rejects with a fault
   * when the subscription ends while held.
   */
  pull(limit: number, timeoutMs: number, signal: AbortSignal): Promise<EventMessage[]> {
    if (signal.aborted) return Promise.resolve([]);
    if (this.queue.length > 0 || timeoutMs <= 0) return Promise.resolve(this.take(limit));
    this.waiter?.settle('superseded');
    return new Promise<EventMessage[]>((resolve, reject) => {
      const waiter: Waiter = {
        settle: (why) => {
          if (this.waiter !== waiter) return;
          this.waiter = null;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          if (why === 'ended') reject(subscriptionGone(this.id));
          else resolve(why === 'aborted' ? [] : this.take(limit));
        },
      };
      const onAbort = () => waiter.settle('aborted');
      const timer = setTimeout(() => waiter.settle('timeout'), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiter = waiter;
    });
  }

  /** Ends a held PullMessages with the subscription-gone fault. */
  end(): void {
    this.waiter?.settle('ended');
    this.queue.length = 0;
  }

  private take(limit: number): EventMessage[] {
    return this.queue.splice(0, Math.max(1, limit));
  }
}
