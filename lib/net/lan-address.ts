import { networkInterfaces } from 'node:os';

/** The host's first non-internal IPv4 address (the spec's vms_lan_ip), loopback when it has none. */
export function lanAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
