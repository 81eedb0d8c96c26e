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
