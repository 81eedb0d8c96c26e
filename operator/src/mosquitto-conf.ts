import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { LookoutError } from 'lookout/core';

/** Where `lookout broker-acl --conf` puts its two listeners, and with what TLS files. */
export interface MosquittoConfOptions {
  aclFile: string;
  /** The devices' password_file: device users only. */
  devicePasswordFile: string;
  /** The hub's and the operator's password_file: `lookout-hub` and `lookout-operator` only. */
  adminPasswordFile: string;
  /** The address both listeners bind. Default 127.0.0.1 for plain MQTT; every interface with TLS. */
  bind?: string;
  devicePort?: number;
  adminPort?: number;
  /**
   * With TLS and a cafile: the devices' listener asks each device for its fleet certificate and takes
   * its CN (the device id) as its user name instead of a password (mosquitto's `require_certificate`
   * and `use_identity_as_username`); the ACL and the client id rule stay as they are.
   */
  tls?: { certfile: string; keyfile: string; cafile?: string; requireCertificate?: boolean };
}

/** The default ports: 1883/8883 (MQTT's own) for the devices, the next one for the hub and operator tools. */
export function defaultPorts(tls: boolean): { devicePort: number; adminPort: number } {
  return tls ? { devicePort: 8883, adminPort: 8884 } : { devicePort: 1883, adminPort: 1884 };
}

/**
 * The mosquitto.conf lines for the bus, as two listeners with their own settings
 * (`per_listener_settings`), because mosquitto 2 cannot bind a client id to one user only:
 *
 * - the devices' listener takes only device users and makes each one's client id its user name
 *   (`use_username_as_clientid`), so no device can connect with another device's client id and end
 *   that device's session (mosquitto would publish the other's offline will);
 * - the hub's and the operator's listener takes only `lookout-hub` and `lookout-operator` and leaves
 *   their client ids to them: two hubs, a hub's replicas and several operator tools (a `lookout tap`
 *   next to Home Assistant) each keep their own session, which one shared client id per user would
 *   not (each would take the other's session, back and forth).
 *
 * Plain MQTT listens on the loopback unless an address is given on purpose; with TLS files the
 * listeners serve every interface (the traffic and passwords are encrypted).
 */
export function mosquittoConf(options: MosquittoConfOptions): string {
  const tls = options.tls;
  const bind = options.bind ?? (tls ? undefined : '127.0.0.1');
  if (bind !== undefined && isIP(bind) === 0) {
    throw new LookoutError('config_invalid', `--bind: an IP address, not "${bind}"`, { details: { usage: true } });
  }
  const ports = defaultPorts(tls !== undefined);
  const devicePort = options.devicePort ?? ports.devicePort;
  const adminPort = options.adminPort ?? ports.adminPort;
  if (devicePort === adminPort) {
    throw new LookoutError('config_invalid', `the devices' and the hub's listeners need two ports, not ${devicePort} twice`, { details: { usage: true } });
  }
  if (tls?.requireCertificate && !tls.cafile) {
    throw new LookoutError('config_invalid', '--require-certificate needs --cafile: the CA the devices’ certificates are checked against', {
      details: { usage: true },
    });
  }
  const tlsLines = tls
    ? [`certfile ${resolve(tls.certfile)}`, `keyfile ${resolve(tls.keyfile)}`, ...(tls.cafile ? [`cafile ${resolve(tls.cafile)}`] : [])]
    : [];
  const listener = (port: number): string => `listener ${port}${bind !== undefined ? ` ${bind}` : ''}`;
  return [
    '# Lookout bus (lookout broker-acl --conf): the devices on one listener, the hub and operator tools on another.',
    '# Each listener has its own users, ACL and client id rule.',
    'per_listener_settings true',
    '',
    `# Devices: user name = device id = client id (a device cannot take another device's session).`,
    listener(devicePort),
    ...tlsLines,
    'allow_anonymous false',
    'use_username_as_clientid true',
    // A device's certificate names it: its CN is its user name, so no password is asked (mosquitto does not read password_file here).
    ...(tls?.requireCertificate ? ['require_certificate true', 'use_identity_as_username true'] : [`password_file ${resolve(options.devicePasswordFile)}`]),
    `acl_file ${resolve(options.aclFile)}`,
    '',
    '# The hub (lookout-hub) and operator tools (lookout-operator): client ids of their own (lookout-hub-…, lookout-tap-…).',
    listener(adminPort),
    ...tlsLines,
    'allow_anonymous false',
    `password_file ${resolve(options.adminPasswordFile)}`,
    `acl_file ${resolve(options.aclFile)}`,
    '',
  ].join('\n');
}
