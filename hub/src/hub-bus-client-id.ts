import { HUB_BUS_USER, deriveDeviceSecret } from 'lookout/lib/auth';

/**
 * The hub's MQTT client id: under the reserved prefix (no device may hold an id there), and not
 * guessable without the fleet secret, so that no client can connect with it and end the hub's
 * session. Stable across restarts of the same hub (a keyed hash of its id, not a random value per
 * start): on an external broker the hub's persistent session resumes, with what was published while
 * it was down, instead of a new one per start left queueing messages for a client that never returns.
 */
export function hubBusClientId(fleetSecret: string, hubId: string): string {
  return `${HUB_BUS_USER}-${deriveDeviceSecret(fleetSecret, 'bus-client-id', hubId).slice(0, 22)}`;
}
