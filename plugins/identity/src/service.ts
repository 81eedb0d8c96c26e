import { serviceToken } from 'lookout/core';

/** Who the device is: provided by the identity plugin to health, the peer mesh and ONVIF. */
export interface DeviceIdentity {
  deviceId: string;
  serial: string;
  /** SHA-256 of the device certificate's DER, colon hex; null when there is none. */
  fingerprint(): string | null;
  /** The peer-mesh TLS material (spec 02: /data/config/shadow_peer.crt and .key). */
  certPath: string;
  keyPath: string;
  labels: string[];
  roles: string[];
}

export const DeviceIdentityToken = serviceToken<DeviceIdentity>('device-identity');
