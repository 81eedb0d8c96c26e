import { networkInterfaces } from 'node:os';
import { xmlEscape } from '../soap/namespaces.js';

/** GetNetworkInterfaces: the host's IPv4 interfaces (the ones clients can reach the device on), read-only. */
export function networkInterfacesXml(el: string): string {
  const out: string[] = [];
  for (const [name, addresses] of Object.entries(networkInterfaces())) {
    const v4 = (addresses ?? []).filter((a) => a.family === 'IPv4');
    if (v4.length === 0) continue;
    const mac = v4[0].mac;
    const manual = v4
      .map((a) => `<tt:Manual><tt:Address>${a.address}</tt:Address><tt:PrefixLength>${prefixLength(a.netmask)}</tt:PrefixLength></tt:Manual>`)
      .join('');
    out.push(
      `<${el} token="${xmlEscape(name)}"><tt:Enabled>true</tt:Enabled><tt:Info><tt:Name>${xmlEscape(name)}</tt:Name><tt:HwAddress>${mac}</tt:HwAddress><tt:MTU>1500</tt:MTU></tt:Info>` +
        `<tt:IPv4><tt:Enabled>true</tt:Enabled><tt:Config>${manual}<tt:DHCP>false</tt:DHCP></tt:Config></tt:IPv4></${el}>`,
    );
  }
  return out.join('');
}

function prefixLength(netmask: string): number {
  return netmask.split('.').reduce((bits, octet) => bits + Number(octet).toString(2).replace(/0/g, '').length, 0);
}
