import { topicMatches } from '../../../../core/src/bus/bus-port.js';

/** Spec 01, "Proxy default subscriptions". */
export const SPEC_DEFAULT_SUBSCRIPTIONS = [
  'devices/+/status',
  'devices/+/telemetry',
  'devices/+/telemetry/#',
  'devices/+/dets',
  'devices/+/health',
  'devices/+/data_manifest',
  'devices/+/responses',
  'devices/+/events',
  'devices/+/events/#',
] as const;

/** The spec's list plus `hello` (DESIGN.md "Wire decisions"): what the bus cache subscribes to. */
export const INGEST_SUBSCRIPTIONS: readonly string[] = [...SPEC_DEFAULT_SUBSCRIPTIONS, 'devices/+/hello'];

/**
 * Several of these filters overlap (`devices/+/telemetry/#` also matches `devices/x/telemetry`).
 * Each filter gets its own handler, and a handler takes a message only when its filter is the
 * first in the list that matches the topic: however a bus dispatches overlapping subscriptions
 * (once per filter, as the in-process bus does, or once per handler), each message counts once.
 */
export class CanonicalFilter {
  private readonly memo = new Map<string, string | undefined>();

  constructor(private readonly filters: readonly string[], private readonly memoLimit = 50_000) {}

  of(topic: string): string | undefined {
    if (this.memo.has(topic)) return this.memo.get(topic);
    const found = this.filters.find((f) => topicMatches(f, topic));
    // Topics are few per device; a flood of random ones only resets the memo.
    if (this.memo.size >= this.memoLimit) this.memo.clear();
    this.memo.set(topic, found);
    return found;
  }
}
