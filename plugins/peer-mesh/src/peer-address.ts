import { isIPv4 } from 'node:net';
import { isUnicast, type MeshNetworks } from './mesh-networks.js';

const isLoopback4 = (ip: string) => isIPv4(ip) && ip.startsWith('127.');

/**
 * Where to reach a peer found by its hello, among its unicast IPv4 addresses inside the mesh
 * networks (anything else in a hello is never used): a device listening on loopback (127.x, side by
 * side on one machine) takes the first 127.x one; any other takes the first off loopback, or,
 * listening on every address, loopback as the last resort. Null: none usable.
 */
export function helloAddress(ips: readonly string[], listenHost: string, networks: MeshNetworks): string | null {
  const v4 = ips.filter((ip) => isIPv4(ip) && networks.admits(ip));
  if (isLoopback4(listenHost)) return v4.find(isLoopback4) ?? null;
  return v4.find((ip) => !isLoopback4(ip)) ?? (listenHost === '0.0.0.0' ? (v4.find(isLoopback4) ?? null) : null);
}

export interface ConfiguredPeer {
  deviceId: string;
  host: string;
  port: number;
}

const ENTRY = /^([^/+#\s@]{1,128})@(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/;

/**
 * MESH_PEERS: `id@host:port` entries, comma separated (unicast IPv4 hosts: the operator's word, so
 * not held to the mesh networks, but never multicast, broadcast or unspecified). Throws naming the first bad entry.
 */
export function parseMeshPeers(value: string | undefined): ConfiguredPeer[] {
  if (!value?.trim()) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = ENTRY.exec(entry);
      const port = m ? Number(m[3]) : 0;
      if (!m || !isIPv4(m[2]) || port < 1 || port > 65535) throw new Error(`"${entry}" is not id@ipv4:port`);
      if (!isUnicast(m[2])) throw new Error(`"${entry}": ${m[2]} is not a unicast address (never multicast, broadcast or 0.0.0.0)`);
      return { deviceId: m[1], host: m[2], port };
    });
}
