import { BlockList, isIP, isIPv4 } from 'node:net';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { DeviceNetworks, unmapIpv4 } from 'lookout/lib/net';

/** Loopback is always a mesh network: devices side by side on one machine mesh over it. */
export const LOOPBACK_NETWORK = '127.0.0.0/8';

/**
 * Never a peer's address, whatever the networks say: the unspecified and "this network" block,
 * multicast, and 240/4 (reserved, with 255.255.255.255, the limited broadcast). The mesh is unicast only.
 */
const NEVER = new BlockList();
NEVER.addSubnet('0.0.0.0', 8, 'ipv4');
NEVER.addSubnet('224.0.0.0', 4, 'ipv4');
NEVER.addSubnet('240.0.0.0', 4, 'ipv4');
NEVER.addAddress('::', 'ipv6');
NEVER.addSubnet('ff00::', 8, 'ipv6');

const isWildcard = (host: string) => host === '0.0.0.0' || host === '::';

/**
 * The networks the mesh may send to and hear from (MESH_NETWORKS; core's DeviceNetworks, as the hub's
 * --device-networks): a peer's address from its hello, or a datagram's source, is used only when it is
 * a unicast address inside them. A hello is data any device on the bus can publish; without this, one
 * could point every device's heartbeats at any host, a multicast group or a broadcast address.
 */
export class MeshNetworks {
  private readonly networks: DeviceNetworks;
  /** The network and directed-broadcast addresses of each IPv4 network listed (prefixes up to /30). */
  private readonly edges = new BlockList();

  constructor(cidrs: readonly string[]) {
    this.networks = new DeviceNetworks(cidrs);
    for (const cidr of this.networks.cidrs) {
      const [address, prefixText] = cidr.split('/') as [string, string | undefined];
      const prefix = prefixText === undefined ? 32 : Number(prefixText);
      if (!isIPv4(address) || prefix > 30) continue;
      const base = networkBase(address, prefix);
      this.edges.addAddress(intToIpv4(base), 'ipv4');
      this.edges.addAddress(intToIpv4(base + 2 ** (32 - prefix) - 1), 'ipv4');
    }
  }

  /**
   * MESH_NETWORKS when set (CIDRs, comma separated); else loopback plus the network of the interface
   * holding the listen address, or, listening on every address (0.0.0.0 as on a device), the networks
   * of every interface: the device's own LAN, never beyond it unless the operator says so.
   */
  static resolve(configured: string | undefined, listenHost: string, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): MeshNetworks {
    if (configured?.trim()) return new MeshNetworks(configured.split(','));
    const own = Object.values(interfaces)
      .flatMap((list) => list ?? [])
      .filter((i) => i.cidr !== null && (isWildcard(listenHost) ? !i.internal : i.address === listenHost))
      .map((i) => networkOf(i.cidr!));
    return new MeshNetworks([...new Set([LOOPBACK_NETWORK, ...own])]);
  }

  /** The networks as given, trimmed. */
  get cidrs(): readonly string[] {
    return this.networks.cidrs;
  }

  /** A unicast address inside the networks, not one's network or broadcast address. */
  admits(address: string): boolean {
    const plain = unmapIpv4(address);
    const family = isIP(plain);
    if (family === 0) return false;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (NEVER.check(plain, type) || this.edges.check(plain, type)) return false;
    return this.networks.contains(plain);
  }
}

/** A CIDR in MESH_NETWORKS' syntax (the config schema checks it with this). */
export function validMeshNetworks(value: string): boolean {
  try {
    return new MeshNetworks(value.split(',')).cidrs.length > 0;
  } catch {
    return false;
  }
}

/** Whether an address may ever be a peer's (the rule MESH_PEERS entries obey too). */
export function isUnicast(address: string): boolean {
  const plain = unmapIpv4(address);
  const family = isIP(plain);
  return family !== 0 && !NEVER.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

/** `192.168.1.20/24` → `192.168.1.0/24` (an IPv6 interface's CIDR is kept as the OS gives it; the BlockList masks it). */
function networkOf(cidr: string): string {
  const [address, prefixText] = cidr.split('/') as [string, string];
  if (!isIPv4(address)) return cidr;
  return `${intToIpv4(networkBase(address, Number(prefixText)))}/${prefixText}`;
}

/** The first address of the /prefix network holding an IPv4 address, as a number. */
function networkBase(address: string, prefix: number): number {
  const size = 2 ** (32 - prefix);
  return Math.floor(ipv4ToInt(address) / size) * size;
}

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}
