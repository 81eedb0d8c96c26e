import { join, resolve } from 'node:path';
import { DEVICE_PATHS, devicePath } from 'lookout/core';

/** The hub's client certificate (A2A peer queries) is named this. */
export const HUB_CERT_COMMON_NAME = 'lookout-hub';

/** Where a holder's TLS material lives. */
export interface TlsPaths {
  certPath: string;
  keyPath: string;
  /** The fleet CA certificate it pins. */
  caPath: string;
}

/** A device's files under its data root (spec 02: /data/config/shadow_peer.crt|.key, fleet_ca.crt). */
export function deviceTlsPaths(dataRoot: string): TlsPaths {
  return {
    certPath: devicePath(dataRoot, DEVICE_PATHS.peerCert),
    keyPath: devicePath(dataRoot, DEVICE_PATHS.peerKey),
    caPath: devicePath(dataRoot, DEVICE_PATHS.fleetCa),
  };
}

/** The hub's files in its data dir: `<hub data dir>/tls/hub.crt|hub.key|fleet_ca.crt`. */
export function hubTlsPaths(hubDataDir: string): TlsPaths {
  const dir = join(resolve(hubDataDir), 'tls');
  return { certPath: join(dir, 'hub.crt'), keyPath: join(dir, 'hub.key'), caPath: join(dir, 'fleet_ca.crt') };
}

/**
 * The hub's server certificate for HTTPS, beside its client one: `<hub data dir>/tls/hub-server.crt|.key`
 * (CN the hub's host name, serverAuth, SAN its names and addresses). A separate key from the client
 * certificate, so that either can be replaced without the other.
 */
export function hubServerTlsPaths(hubDataDir: string): TlsPaths {
  const dir = join(resolve(hubDataDir), 'tls');
  return { certPath: join(dir, 'hub-server.crt'), keyPath: join(dir, 'hub-server.key'), caPath: join(dir, 'fleet_ca.crt') };
}
