import { isIP } from 'node:net';
import { unmapIpv4 } from './device-networks.js';

/** True for a host name or address that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = unmapIpv4(host.replace(/^\[|\]$/g, ''));
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1';
  return false;
}
