import { createHash } from 'node:crypto';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { xmlEscape } from '../soap/namespaces.js';

const ZERO_MAC = '00:00:00:00:00:00';

export interface InterfaceEntry {
  name: string;
  mac: string;
  addresses: { address: string; prefixLength: number }[];
}

/**
 * The interfaces a real camera would list: its network ports, never the loopback. The host's
 * non-internal IPv4 interfaces come first, in the order the system gives them. A simulated camera
 * on a host with no such interface (a test's network namespace) still has to describe one port,
 * as a real camera always has one: the loopback addresses are listed as `eth0` with a stable,
 * locally administered MAC derived from the device serial (02:… is never a vendor's), never `lo`
 * with a zero MAC, which clients take for a broken device.
 */
export function deviceInterfaces(serial: string, all: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): InterfaceEntry[] {
  const out: InterfaceEntry[] = [];
  let loopback: NetworkInterfaceInfo[] = [];
  for (const [name, addresses] of Object.entries(all)) {
    const v4 = (addresses ?? []).filter((a) => a.family === 'IPv4');
    if (v4.length === 0) continue;
    if (v4.every((a) => a.internal)) {
      loopback = loopback.concat(v4);
      continue;
    }
    const external = v4.filter((a) => !a.internal);
    out.push({ name, mac: external[0].mac !== ZERO_MAC ? external[0].mac : localMac(serial), addresses: external.map(entry) });
  }
  if (out.length === 0 && loopback.length > 0) out.push({ name: 'eth0', mac: localMac(serial), addresses: loopback.map(entry) });
  return out;
}

const entry = (a: NetworkInterfaceInfo): { address: string; prefixLength: number } => ({ address: a.address, prefixLength: prefixLength(a.netmask) });

/** A locally administered unicast MAC (first octet 02) that stays the same for one device. */
export function localMac(serial: string): string {
  const h = createHash('sha256').update(`lookout:onvif:mac:${serial}`).digest();
  return ['02', ...Array.from(h.subarray(0, 5), (b) => b.toString(16).padStart(2, '0'))].join(':');
}

/** GetNetworkInterfaces: the device's IPv4 interfaces (the ones clients can reach it on), read-only. */
export function networkInterfacesXml(el: string, serial: string): string {
  return deviceInterfaces(serial)
    .map((i) => {
      const manual = i.addresses
        .map((a) => `<tt:Manual><tt:Address>${a.address}</tt:Address><tt:PrefixLength>${a.prefixLength}</tt:PrefixLength></tt:Manual>`)
        .join('');
      return (
        `<${el} token="${xmlEscape(i.name)}"><tt:Enabled>true</tt:Enabled><tt:Info><tt:Name>${xmlEscape(i.name)}</tt:Name><tt:HwAddress>${i.mac}</tt:HwAddress><tt:MTU>1500</tt:MTU></tt:Info>` +
        `<tt:IPv4><tt:Enabled>true</tt:Enabled><tt:Config>${manual}<tt:DHCP>false</tt:DHCP></tt:Config></tt:IPv4></${el}>`
      );
    })
    .join('');
}

function prefixLength(netmask: string): number {
  return netmask.split('.').reduce((bits, octet) => bits + Number(octet).toString(2).replace(/0/g, '').length, 0);
}
