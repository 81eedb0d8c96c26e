import { createHash } from 'node:crypto';

/**
 * The device's WS-Discovery endpoint address, which GetEndpointReference answers as its GUID (the
 * ONVIF Core spec makes them one): a name-based UUID (RFC 4122 version 5 layout over SHA-1) of the
 * device id, so a client that adopted the camera recognises it after a restart. One formula for both:
 * the ws-discovery plugin announces what this returns (through service.ts).
 */
export function endpointAddress(deviceId: string): string {
  const hash = createHash('sha1').update('lookout:ws-discovery:').update(deviceId).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
