import { networkInterfaces } from 'node:os';

/**
 * Addresses the hub may reach the device at: loopback first (devices and hub side by side in
 * development), then every non-internal address of the machine.
 */
export function deviceAddresses(): string[] {
  const out = ['127.0.0.1'];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      // Link-local IPv6 needs a zone to be reachable, which the wire format does not carry.
      if (a.family === 'IPv6' && a.address.toLowerCase().startsWith('fe80:')) continue;
      if (!out.includes(a.address)) out.push(a.address);
    }
  }
  return out;
}
