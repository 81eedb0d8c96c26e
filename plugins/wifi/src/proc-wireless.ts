/** One interface of /proc/net/wireless (the kernel's wireless extensions statistics). */
export interface WirelessLine {
  iface: string;
  /** The driver's link quality figure (mac80211 scales it to 0..70). */
  link: number;
  /** Signal level in dBm. */
  level_dbm: number;
  /** Noise in dBm; null where the driver does not measure it (-256, or 0 with no signal). */
  noise_dbm: number | null;
}

/** At most this many interface lines are read: a device has a handful, the rest is not a wireless table. */
const MAX_LINES = 64;

/**
 * Parses /proc/net/wireless: two header lines, then `wlan0: 0000   70.  -40.  -256  0 0 0 0 0  0`
 * (status, link, level, noise; a trailing dot marks a value updated since the last read). Lines
 * that do not have that shape are skipped.
 */
export function parseProcWireless(text: string): WirelessLine[] {
  const out: WirelessLine[] = [];
  for (const raw of text.split('\n').slice(2, 2 + MAX_LINES)) {
    const m = /^\s*([^\s:]{1,15}):\s+[0-9a-fA-F]+\s+(-?\d+)\.?\s+(-?\d+)\.?\s+(-?\d+)\.?/.exec(raw);
    if (!m) continue;
    const level = Number(m[3]);
    const noise = Number(m[4]);
    out.push({
      iface: m[1],
      link: Number(m[2]),
      // Old drivers report the level unsigned (e.g. 196 for -60 dBm, 256 added).
      level_dbm: level > 63 ? level - 256 : level,
      noise_dbm: noise <= -256 || noise === 0 ? null : noise > 63 ? noise - 256 : noise,
    });
  }
  return out;
}
