import type { DeviceCache } from './device-cache.js';

/** What applyToCache returns for a message older than the latest held: it changed nothing but its count. */
export const OLDER = Symbol('older than the latest held');

/**
 * Stage (d), the cache: a valid message of a known device becomes its entry's latest for the topic
 * (DeviceCache.store keeps the newest by the device's own clock). Returns what the entry held for the
 * topic before, or OLDER when the message is older than that (it is counted, and changes nothing
 * else), except an event, which is one of its own.
 */
export function applyToCache(
  device: DeviceCache,
  isEvent: boolean,
  suffix: string,
  message: Record<string, unknown>,
  retain: boolean,
  now: number,
): Record<string, unknown> | undefined | typeof OLDER {
  // A retained message may be old: it dates from its own timestamp, not from when it reached us.
  const stamped = retain && typeof message.timestamp === 'string' ? Date.parse(message.timestamp) : NaN;
  const sentAt = Number.isFinite(stamped) ? Math.min(stamped, now) : now;
  const previous = device.store(suffix, message, now, retain, sentAt);
  return device.wasOlder && !isEvent ? OLDER : previous;
}
