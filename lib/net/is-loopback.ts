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

/** Exact loopback names only: a DNS name such as `127.0.0.1.evil.example` may resolve to loopback too. */
const LOOPBACK_HOST_NAME = /^(?:localhost|::1|127(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})$/i;

/** True for a `Host` header (name and optional port) that names this machine's loopback exactly. */
export function isLoopbackHostHeader(header: string | undefined): boolean {
  const name = hostHeaderName(header);
  return name !== undefined && LOOPBACK_HOST_NAME.test(name);
}

/** An `Origin` naming this machine's loopback exactly (`http://localhost:6274`, `https://[::1]`); `null` and other schemes are not. */
export function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  // An Origin is scheme, host and port alone: credentials, a path or a query make it something else.
  const bare = !url.username && !url.password && url.pathname === '/' && !url.search && !url.hash && !origin.endsWith('/');
  return bare && isLoopbackHostHeader(url.host);
}

/** The name of a `Host` header without its port, lower case (`[::1]:8788` → `::1`); undefined when there is none. */
export function hostHeaderName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const name = header.startsWith('[') ? header.slice(1, header.indexOf(']')) : header.split(':')[0];
  return name ? name.toLowerCase() : undefined;
}
