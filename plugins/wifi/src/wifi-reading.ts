import { readFile } from 'node:fs/promises';
import { parseDefaultRoute } from './default-route.js';
import { iwLink } from './iw-link.js';
import { parseProcWireless } from './proc-wireless.js';
import type { Uplink } from './service.js';
import { uplinkKind } from './uplink-kind.js';

export interface WifiSources {
  procWireless: string;
  procRoute: string;
  sysNet: string;
  /** The iw program, or null to skip nl80211. */
  iw: string | null;
  /** The interface to report; default the first /proc/net/wireless lists. */
  iface?: string;
}

/** One reading of the radio, before the failover bookkeeping. */
export interface RadioReading {
  state: 'connected' | 'disconnected' | 'unavailable';
  reason: string | null;
  interface: string | null;
  rssi_dbm: number | null;
  ssid: string | null;
  bssid: string | null;
  noise_dbm: number | null;
  link_quality_pct: number | null;
  frequency_mhz: number | null;
  tx_bitrate_mbps: number | null;
  nl80211: string | null;
}

const NONE = { rssi_dbm: null, ssid: null, bssid: null, noise_dbm: null, link_quality_pct: null, frequency_mhz: null, tx_bitrate_mbps: null, nl80211: null };

/** /proc files are small; a larger one is not what we think it is. */
async function readSmall(path: string): Promise<string> {
  const text = await readFile(path, 'utf8');
  return text.slice(0, 64 * 1024);
}

/** The radio now: /proc/net/wireless for the level and link quality, `iw dev <if> link` for SSID, BSSID, frequency. */
export async function readRadio(src: WifiSources): Promise<{ radio: RadioReading; wireless: Set<string> }> {
  let text: string;
  try {
    text = await readSmall(src.procWireless);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist (no Wi-Fi hardware, or a kernel without wireless support)' : `cannot be read (${(err as Error).message})`;
    return {
      radio: { state: 'unavailable', reason: `no wireless interface: ${src.procWireless} ${why}`, interface: src.iface ?? null, ...NONE },
      wireless: new Set(),
    };
  }
  const lines = parseProcWireless(text);
  const wireless = new Set(lines.map((l) => l.iface));
  const line = src.iface ? lines.find((l) => l.iface === src.iface) : lines[0];
  if (!line) {
    const reason = src.iface
      ? `${src.iface} is not a wireless interface here (${src.procWireless} lists ${lines.length ? lines.map((l) => l.iface).join(', ') : 'none'})`
      : `no wireless interface: ${src.procWireless} lists none`;
    return { radio: { state: 'unavailable', reason, interface: src.iface ?? null, ...NONE }, wireless };
  }
  const iw = src.iw ? await iwLink(src.iw, line.iface) : { ok: false as const, missing: true, reason: 'iw is off (WIFI_IW=off)' };
  // iw's answer decides association where it ran; without it, a link figure above 0 does.
  const connected = iw.ok ? iw.link.connected : line.link > 0;
  const quality = Math.max(0, Math.min(100, Math.round((line.link / 70) * 100)));
  const radio: RadioReading = {
    state: connected ? 'connected' : 'disconnected',
    reason: connected ? null : `${line.iface} is not associated with an access point`,
    interface: line.iface,
    rssi_dbm: connected ? (iw.ok && iw.link.signal_dbm !== null ? iw.link.signal_dbm : line.level_dbm) : null,
    ssid: iw.ok ? iw.link.ssid : null,
    bssid: iw.ok ? iw.link.bssid : null,
    noise_dbm: line.noise_dbm,
    link_quality_pct: connected ? quality : 0,
    frequency_mhz: iw.ok ? iw.link.frequency_mhz : null,
    tx_bitrate_mbps: iw.ok ? iw.link.tx_bitrate_mbps : null,
    nl80211: iw.ok ? null : iw.reason,
  };
  return { radio, wireless };
}

/** The uplink the default route takes now, or null without a default route (or without /proc/net/route). */
export async function readUplink(src: WifiSources, wireless: Set<string>): Promise<Uplink | null> {
  const text = await readSmall(src.procRoute).catch(() => null);
  const route = text === null ? null : parseDefaultRoute(text);
  if (!route) return null;
  return { interface: route.iface, kind: await uplinkKind(route.iface, src.sysNet, wireless), gateway: route.gateway };
}
