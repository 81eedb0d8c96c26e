import { NS } from './namespaces.js';
import type { Probe } from './probe.js';

/** ONVIF namespaces a client may put the device types in (node-onvif-ts sends Device in the network namespace). */
const ONVIF_TYPE_NAMESPACES = new Set<string>([NS.dn, NS.tds]);
const OUR_TYPES = new Set(['NetworkVideoTransmitter', 'Device']);

/**
 * Whether the device answers a Probe: every probed type must be one it is (no types: any device),
 * whatever prefix names it; an undeclared prefix is judged on the local name alone, since some
 * clients send one. Probed scopes must each match one of the device's.
 */
export function matchesProbe(probe: Probe, scopes: readonly string[]): boolean {
  const typesOk = probe.types.every((t) => OUR_TYPES.has(t.local) && (t.ns === null || ONVIF_TYPE_NAMESPACES.has(t.ns)));
  return typesOk && probe.scopes.every((wanted) => scopes.some((ours) => scopeMatches(wanted, ours, probe.matchBy)));
}

const STRCMP = 'http://schemas.xmlsoap.org/ws/2005/04/discovery/strcmp0';

/** WS-Discovery scope matching: strcmp0 exactly, otherwise (RFC 3986, the default) by whole path segments. */
export function scopeMatches(wanted: string, ours: string, matchBy: string | null): boolean {
  if (matchBy === STRCMP) return wanted === ours;
  const a = wanted.replace(/\/+$/, '');
  const b = ours.replace(/\/+$/, '');
  return b === a || (b.startsWith(a) && b[a.length] === '/');
}
