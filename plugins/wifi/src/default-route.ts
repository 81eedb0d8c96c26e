/** The interface the default route leaves by, from /proc/net/route. */
export interface DefaultRoute {
  iface: string;
  gateway: string;
  metric: number;
}

const RTF_UP = 0x1;

/** Reads the little-endian hex address the kernel writes (`0101A8C0` is 192.168.1.1). */
function ipv4(hex: string): string {
  const n = parseInt(hex, 16);
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff].join('.');
}

/**
 * The active default route: destination and mask 0, up, the lowest metric among them (the one the
 * kernel uses). Null when there is none. Columns: Iface Destination Gateway Flags RefCnt Use Metric Mask …
 */
export function parseDefaultRoute(text: string): DefaultRoute | null {
  let best: DefaultRoute | null = null;
  for (const line of text.split('\n').slice(1, 1025)) {
    const c = line.trim().split(/\s+/);
    if (c.length < 8) continue;
    const [iface, dest, gateway, flags, , , metric, mask] = c;
    if (dest !== '00000000' || mask !== '00000000' || (parseInt(flags, 16) & RTF_UP) === 0) continue;
    const m = Number(metric);
    if (!Number.isFinite(m)) continue;
    if (!best || m < best.metric) best = { iface, gateway: ipv4(gateway), metric: m };
  }
  return best;
}
