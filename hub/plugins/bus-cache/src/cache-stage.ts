import type { BusSuffix } from 'lookout/core';
import type { DeviceCache } from './device-cache.js';
import type { IngestEvents } from './ingest-events.js';

/**
 * Stage (d), the cache: a valid message of a known device becomes its entry's latest for the topic
 * (DeviceCache.store keeps the newest by the device's own clock). Listeners hear of every stored
 * message, and of those that changed what the entry says (`applied`): an older one than the latest
 * held changes nothing but its count, except an event, which is one of its own.
 */
export function applyToCache(
  events: IngestEvents,
  device: DeviceCache,
  key: BusSuffix,
  suffix: string,
  topic: string,
  message: Record<string, unknown>,
  retain: boolean,
  now: number,
): void {
  // A retained message may be old: it dates from its own timestamp, not from when it reached us.
  const stamped = retain && typeof message.timestamp === 'string' ? Date.parse(message.timestamp) : NaN;
  const sentAt = Number.isFinite(stamped) ? Math.min(stamped, now) : now;
  const previous = device.store(suffix, message, now, retain, sentAt);
  events.stored();
  if (device.wasOlder && key !== 'events/+') return;
  events.applied(device, key, suffix, topic, message, previous, retain, now);
}
