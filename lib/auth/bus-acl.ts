import { BUS_CONTRACTS, contractKeyForSuffix, DeviceIdSchema } from 'lookout/core/contracts';
import { PEER_DIRECTORY_FILTER } from 'lookout/core';
import { deriveDeviceSecret } from './device-credentials.js';

/**
 * Who may do what on the bus. Every client authenticates as itself: the hub, the operator, or one
 * device (user name = device id, password derived from the fleet secret). A device publishes only
 * the spec's topics under its own `devices/<id>/` and its `shadow/<id>/` mirror (a made-up topic
 * would be a broker-side store no cache bound covers), retains only what the contract retains
 * (status), and reads only its own cmd topics and every device's `hello` (the peer mesh finds its
 * peers there: addresses and ports, no secret); the operator reads everything and
 * writes cmd topics; the hub does anything. The embedded broker enforces this and `lookout
 * broker-acl` writes the same rules as a mosquitto acl_file for an external broker.
 */
export const HUB_BUS_USER = 'lookout-hub';
export const OPERATOR_BUS_USER = 'lookout-operator';

/**
 * Ids under this prefix (any case) belong to the hub's and the operator's own bus clients: the hub's
 * user name and client ids, the operator's and its tools' (`lookout-tap-…`). A device may not hold one:
 * its client id is its id, and a client connecting with another's client id ends that one's session.
 */
export const RESERVED_BUS_ID_PREFIX = 'lookout-';

/** True for an id no device may hold (see RESERVED_BUS_ID_PREFIX). */
export function isReservedBusId(id: string): boolean {
  return id.toLowerCase().startsWith(RESERVED_BUS_ID_PREFIX);
}

export type BusRole = { kind: 'hub' } | { kind: 'operator' } | { kind: 'device'; id: string };

/** The role of an authenticated user name; undefined for a name that can be none (not a valid device id, or a reserved one). */
export function busRoleOf(username: string): BusRole | undefined {
  if (username === HUB_BUS_USER) return { kind: 'hub' };
  if (username === OPERATOR_BUS_USER) return { kind: 'operator' };
  if (isReservedBusId(username)) return undefined;
  return DeviceIdSchema.safeParse(username).success ? { kind: 'device', id: username } : undefined;
}

/** The MQTT password of a bus user (a device id, the hub or the operator). */
export function busPassword(fleetSecret: string, username: string): string {
  return deriveDeviceSecret(fleetSecret, 'mqtt', username);
}

export function mayPublish(role: BusRole, topic: string, retain = false): boolean {
  switch (role.kind) {
    case 'hub':
      return true;
    case 'operator':
      return /^devices\/[^/]+\/cmd\//.test(topic) && !retain;
    case 'device': {
      const own = [`devices/${role.id}/`, `shadow/${role.id}/`].find((prefix) => topic.startsWith(prefix));
      const key = own ? contractKeyForSuffix(topic.slice(own.length)) : undefined;
      return key !== undefined && (!retain || BUS_CONTRACTS[key].retain);
    }
  }
}

/** A filter is allowed when every topic it can match is: for a device, filters inside its own cmd prefix, and the peer directory. */
export function maySubscribe(role: BusRole, filter: string): boolean {
  switch (role.kind) {
    case 'hub':
    case 'operator':
      return true;
    case 'device':
      if (filter === PEER_DIRECTORY_FILTER) return true;
      return filter === `devices/${role.id}/cmd/#` || (filter.startsWith(`devices/${role.id}/cmd/`) && !filter.startsWith(`devices/${role.id}/cmd/#/`));
  }
}

/** The same rules as a mosquitto acl_file (`%u` is the user name, which for a device is its id). */
export function mosquittoAcl(): string {
  return [
    '# Lookout bus ACL (lookout broker-acl): the same rules the hub’s embedded broker enforces.',
    `user ${HUB_BUS_USER}`,
    'topic readwrite #',
    '',
    `user ${OPERATOR_BUS_USER}`,
    'topic read #',
    'topic write devices/+/cmd/#',
    '',
    '# Every other user is a device whose user name is its id: the spec topics under its own prefix.',
    ...Object.keys(BUS_CONTRACTS).flatMap((key) => {
      const suffix = key === 'events/+' ? 'events/#' : key;
      return [`pattern write devices/%u/${suffix}`, `pattern write shadow/%u/${suffix}`];
    }),
    'pattern read devices/%u/cmd/#',
    `pattern read ${PEER_DIRECTORY_FILTER}`,
    '',
  ].join('\n');
}
