import { serviceToken } from 'lookout/core';

/** Whether the device key is on disk. */
export interface KeyDurability {
  /**
   * true: the key is on disk (provisioned, or generated and written); false: generated but held in
   * memory only, because it could not be written yet (a full disk); null: the device has no key.
   */
  durable: boolean | null;
  /** Why it is not durable (the failed write); null otherwise. */
  reason: string | null;
}

/** Who the device is: provided by the identity plugin to health, the peer mesh and ONVIF. */
export interface DeviceIdentity {
  deviceId: string;
  serial: string;
  /** SHA-256 of the device certificate's DER, colon hex; null when there is none. */
  fingerprint(): string | null;
  /** When that certificate ends (ISO 8601); null when there is none. Changes with it on SIGHUP. */
  certNotAfter(): string | null;
  /** Whether the key behind that fingerprint survives a restart (it changes when it did not). */
  keyDurability(): KeyDurability;
  /** The peer-mesh TLS material (spec 02: /data/config/shadow_peer.crt and .key). */
  certPath: string;
  keyPath: string;
  labels: string[];
  roles: string[];
}

export const DeviceIdentityToken = serviceToken<DeviceIdentity>('device-identity');
