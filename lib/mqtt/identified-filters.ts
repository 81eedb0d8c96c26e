import type { MessageHandler } from 'lookout/core/host';
import { subscriptionIdOf } from './subscription-ids.js';
import type { SubscriptionTable } from './subscription-table.js';

/**
 * A client's filters by their MQTT 5 subscription identifier (derived from the filter, the same in
 * every run: subscription-ids.ts), and the handlers one copy of a message reaches by the
 * identifiers it carries.
 */
export class IdentifiedFilters {
  private readonly byId = new Map<number, Set<string>>();

  constructor(private readonly table: SubscriptionTable) {}

  /** The identifier `filter` is subscribed under, noted. */
  note(filter: string): number {
    const id = subscriptionIdOf(filter);
    this.byId.set(id, new Set(this.byId.get(id)).add(filter));
    return id;
  }

  forget(filter: string): void {
    const id = subscriptionIdOf(filter);
    this.byId.get(id)?.delete(filter);
    if (this.byId.get(id)?.size === 0) this.byId.delete(id);
  }

  /**
   * By the identifiers the copy carries, each handler once however many copies the broker sends;
   * a copy without any (a broker without them) by its topic. An identifier this run does not hold
   * (a persistent session's message for a filter an earlier run had) reaches no handler.
   */
  handlersOf(topic: string, ids: number | number[] | undefined): MessageHandler[] {
    if (ids === undefined) return this.table.handlersFor(topic);
    const filters: string[] = [];
    for (const id of Array.isArray(ids) ? ids : [ids]) filters.push(...(this.byId.get(id) ?? []));
    return this.table.handlersForCopy(topic, filters);
  }
}

/** Calls each handler with the message; a throw or a rejected promise goes to `failed`, and the next handler still runs. */
export function runHandlers(
  handlers: readonly MessageHandler[],
  topic: string,
  payload: Buffer,
  meta: { retain: boolean },
  failed: (err: unknown, topic: string) => void,
): void {
  for (const handler of handlers) {
    try {
      const result: unknown = handler(topic, payload, meta);
      if (result instanceof Promise) result.catch((err: unknown) => failed(err, topic));
    } catch (err) {
      failed(err, topic);
    }
  }
}
