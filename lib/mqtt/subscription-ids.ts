import { createHash } from 'node:crypto';

/** The largest MQTT 5 Subscription Identifier (a variable byte integer). */
const MAX_SUBSCRIPTION_ID = 268_435_455;

/**
 * The MQTT 5 Subscription Identifier of a filter: derived from the filter itself, so that it is the
 * same in every process and every session. A message the broker still holds for a persistent session
 * made by an earlier run names the filter it was meant for, and is dropped when this run no longer
 * holds that filter instead of reaching handlers by topic alone. Two filters of one client sharing an
 * id (a chance of about 1 in 8 000 for 256 filters) costs nothing but precision: both are looked up.
 */
export function subscriptionIdOf(filter: string): number {
  const id = createHash('sha256').update(filter).digest().readUInt32BE(0) % MAX_SUBSCRIPTION_ID;
  return id + 1;
}
