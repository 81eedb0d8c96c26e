import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * Addresses the hub and peers may reach the device at. A device listening on one address
 * (`--tool-host 127.0.0.3`, a camera's LAN address) is reachable there only, so that is all it
 * announces. One listening on every address (`0.0.0.0`, `::`) announces loopback first (devices and
 * hub side by side in development), then every non-internal address of the machine; so does one
 * given a host name, since hello carries addresses only.
 */
export function deviceAddresses(listenHost = '127.0.0.1'): string[] {
  if (isIP(listenHost) !== 0 && listenHost !== '0.0.0.0' && listenHost !== '::') return [listenHost];
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
