import { BlockList, isIP } from 'node:net';
import { LookoutError } from 'lookout/core';

export const DEFAULT_DEVICE_NETWORKS = ['127.0.0.0/8'];

/**
 * The networks devices may be contacted in (`--device-networks`). A hello is data anyone on the
 * bus can publish; the hub only ever dials an address inside these or one the registry file names.
 */
export class DeviceNetworks {
  private readonly list = new BlockList();
  readonly cidrs: readonly string[];

  constructor(cidrs: readonly string[]) {
    this.cidrs = cidrs.map((c) => c.trim()).filter(Boolean);
    for (const cidr of this.cidrs) {
      const [address, prefixText] = cidr.split('/') as [string, string | undefined];
      const family = isIP(address);
      const max = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (family === 0 || !/^\d+$/.test(prefixText ?? String(max)) || prefix < 0 || prefix > max) {
        throw new LookoutError('config_invalid', `--device-networks: "${cidr}" is not a network in CIDR notation (e.g. 127.0.0.0/8, 10.20.0.0/16, fd00::/8)`, {
          details: { key: 'device_networks', value: cidr },
        });
      }
      this.list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  static parse(text: string | readonly string[] | undefined): DeviceNetworks {
    if (text === undefined) return new DeviceNetworks(DEFAULT_DEVICE_NETWORKS);
    return new DeviceNetworks(typeof text === 'string' ? text.split(',') : text);
  }

  /**
   * Addresses repeat (a device's own is checked at every registry lookup, each device at every
   * readiness round and /metrics scrape), and BlockList.check makes a SocketAddress each time: with
   * 10 000 devices those checks held the hub's loop for seconds. The networks never change: an
   * answer is kept, up to MAX_REMEMBERED addresses (then the memory starts again).
   */
  private readonly answers = new Map<string, boolean>();

  contains(address: string): boolean {
    let inside = this.answers.get(address);
    if (inside === undefined) {
      const plain = unmapIpv4(address);
      const family = isIP(plain);
      inside = family !== 0 && this.list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
      if (this.answers.size >= DeviceNetworks.MAX_REMEMBERED) this.answers.clear();
      this.answers.set(address, inside);
    }
    return inside;
  }

  static readonly MAX_REMEMBERED = 65_536;

  /** How many answers are kept now (bounded by MAX_REMEMBERED). */
  get remembered(): number {
    return this.answers.size;
  }
}

/** `::ffff:10.0.0.5` (an IPv4 peer seen through an IPv6 socket) is `10.0.0.5`. */
export function unmapIpv4(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1] : address;
}
