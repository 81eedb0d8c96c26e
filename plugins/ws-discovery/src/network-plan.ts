import { BlockList, isIP } from 'node:net';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { isLoopbackHost } from 'lookout/lib/net';

/**
 * Where discovery listens and speaks, from how the device runs:
 * - `loopback`: simulated (`--source sim`) or surfaces on loopback only. The group is joined on
 *   127.0.0.1 and the multicast interface is 127.0.0.1, so Hello, Bye and ProbeMatch never leave
 *   the machine, and only probes from loopback senders are answered. XAddrs name the listen host
 *   (127.0.0.1 when that is a wildcard).
 * - `address`: surfaces on one IPv4 address; discovery joins and speaks on that interface only.
 * - `any`: surfaces on every address; discovery joins on every non-internal IPv4 interface.
 */
export type NetworkPlan = { kind: 'loopback'; host: string } | { kind: 'address'; address: string } | { kind: 'any' };

export const LOOPBACK = '127.0.0.1';

export function networkPlan(info: { source?: 'sim'; listenHost: string }): NetworkPlan {
  if (info.source === 'sim' || isLoopbackHost(info.listenHost)) return { kind: 'loopback', host: isWildcard(info.listenHost) ? LOOPBACK : info.listenHost };
  if (isIP(info.listenHost) === 4 && !isWildcard(info.listenHost)) return { kind: 'address', address: info.listenHost };
  return { kind: 'any' };
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '';
}

type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

function externalIpv4(interfaces: Interfaces): NetworkInterfaceInfo[] {
  return Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((a) => a.family === 'IPv4' && !a.internal);
}

/** The local addresses whose interfaces join the group and carry Hello and Bye. */
export function announceAddresses(plan: NetworkPlan, interfaces: Interfaces = networkInterfaces()): string[] {
  if (plan.kind === 'loopback') return [LOOPBACK];
  if (plan.kind === 'address') return [plan.address];
  const all = [...new Set(externalIpv4(interfaces).map((a) => a.address))];
  return all.length ? all : [LOOPBACK];
}

/**
 * The host a prober reaches the device at, for the XAddrs of the answer: a real address, never a
 * wildcard. Node does not tell which address a datagram arrived on, so with `any` it is the
 * interface on the sender's subnet (else the first external one).
 */
export function replyHost(plan: NetworkPlan, sender: string, interfaces: Interfaces = networkInterfaces()): string {
  if (plan.kind === 'loopback') return plan.host;
  if (plan.kind === 'address') return plan.address;
  const candidates = externalIpv4(interfaces);
  return onLinkOf(sender, candidates) ?? candidates[0]?.address ?? LOOPBACK;
}

/** The address of the interface among `candidates` whose subnet holds `sender`. */
function onLinkOf(sender: string, candidates: NetworkInterfaceInfo[]): string | undefined {
  if (isIP(sender) !== 4) return undefined;
  for (const a of candidates) {
    const subnet = new BlockList();
    subnet.addSubnet(a.address, Number(a.cidr?.split('/')[1] ?? 32), 'ipv4');
    if (subnet.check(sender, 'ipv4')) return a.address;
  }
  return undefined;
}

/**
 * Where the answer to a probe from `sender` goes. A probe sent through `lo` without a source
 * address chosen (a 224.0.0.0/4 route on lo has link scope, 127.0.0.1 host scope) arrives from
 * 0.0.0.0, which only this machine sends from: the answer goes to 127.0.0.1.
 */
export function replyAddress(sender: string): string {
  return sender === '0.0.0.0' ? LOOPBACK : sender;
}

/**
 * Whether the plan answers a probe from this sender. WS-Discovery is a protocol of the local link
 * (its multicast goes no further than one hop): a probe from beyond the subnets the device speaks on
 * is either routed unicast or carries a forged source, and an answer (three times the probe's size)
 * would go to someone who did not ask. The loopback plan never answers beyond the machine; this
 * machine's own probes are answered on every plan.
 */
export function answersSender(plan: NetworkPlan, sender: string, interfaces: Interfaces = networkInterfaces()): boolean {
  if (isLoopbackHost(replyAddress(sender))) return true;
  if (plan.kind === 'loopback') return false;
  const external = externalIpv4(interfaces);
  if (plan.kind === 'address') {
    const own = external.filter((a) => a.address === plan.address);
    // An address no interface lists (it went away under us) leaves nothing to judge the link by.
    return own.length === 0 || onLinkOf(sender, own) !== undefined;
  }
  return onLinkOf(sender, external) !== undefined;
}

/** The host in the XAddrs of an announcement sent on the interface of `address`. */
export function announceHost(plan: NetworkPlan, address: string): string {
  return plan.kind === 'loopback' ? plan.host : address;
}

/** A host as it appears in a URL (IPv6 in brackets). */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
