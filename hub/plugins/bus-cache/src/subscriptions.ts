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

/**
 * What the bus cache subscribes to: the spec's list plus `hello` (DESIGN.md "Wire decisions"), as
 * filters that do not overlap. `devices/+/telemetry/#` already matches `devices/<id>/telemetry`
 * and `devices/+/events/#` matches `devices/<id>/events` (MQTT: `#` includes the parent level),
 * so the spec's bare `telemetry` and `events` filters add nothing but a second match. Overlap is
 * not harmless: aedes with a persistent session and overlapping QoS 1 subscriptions delivers
 * duplicates, then refuses the second acknowledgement and drops the connection (seen with
 * aedes 1.x, 10 000 messages); MQTT 5 brokers may send one copy per matching filter.
 */
export const INGEST_SUBSCRIPTIONS: readonly string[] = [
  'devices/+/status',
  'devices/+/telemetry/#',
  'devices/+/dets',
  'devices/+/health',
  'devices/+/data_manifest',
  'devices/+/responses',
  'devices/+/events/#',
  'devices/+/hello',
];

/**
 * Longest topic the hub looks up. V8 hashes a string of more than 16 383 characters by its length
 * alone, so long topics of one length all collide in a Map: each message would scan the ones
 * before it (4 000 such messages held the hub for minutes). No device topic comes near this.
 */
export const MAX_TOPIC_CHARS = 512;

/**
 * Each filter gets its own handler, which takes a message only when its filter is the first in the
 * list that matches the topic: should overlapping filters ever be added, however a bus dispatches
 * them (once per filter, as the in-process bus does, or once per handler), a message counts once.
 */
export class CanonicalFilter {
  private readonly memo = new Map<string, string | null>();

  constructor(private readonly filters: readonly string[], private readonly memoLimit = 50_000) {}

  of(topic: string): string | undefined {
    if (topic.length > MAX_TOPIC_CHARS) return this.filters.find((f) => topicMatches(f, topic));
    const known = this.memo.get(topic);
    if (known !== undefined) return known ?? undefined;
    const found = this.filters.find((f) => topicMatches(f, topic)) ?? null;
    // Topics are few per device; a flood of random ones only resets the memo.
    if (this.memo.size >= this.memoLimit) this.memo.clear();
    this.memo.set(topic, found);
    return found ?? undefined;
  }
}
