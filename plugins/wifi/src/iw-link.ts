import { execFile } from 'node:child_process';

/** What `iw dev <if> link` (nl80211) says of the association. */
export interface IwLink {
  connected: boolean;
  ssid: string | null;
  bssid: string | null;
  frequency_mhz: number | null;
  signal_dbm: number | null;
  tx_bitrate_mbps: number | null;
  rx_bitrate_mbps: number | null;
}

/**
 * Parses `iw dev wlan0 link`: `Not connected.`, or `Connected to <bssid> (on wlan0)` then indented
 * `SSID: …`, `freq: 5180`, `signal: -52 dBm`, `tx bitrate: 650.0 MBit/s …` lines.
 */
export function parseIwLink(text: string): IwLink {
  const first = /^Connected to ([0-9a-fA-F:]{17})/m.exec(text);
  const field = (name: string) => new RegExp(`^\\s*${name}:\\s*(.*)$`, 'm').exec(text)?.[1]?.trim() ?? null;
  const num = (v: string | null) => {
    const n = v === null ? NaN : parseFloat(v);
    return Number.isFinite(n) ? n : null;
  };
  if (!first) return { connected: false, ssid: null, bssid: null, frequency_mhz: null, signal_dbm: null, tx_bitrate_mbps: null, rx_bitrate_mbps: null };
  return {
    connected: true,
    ssid: field('SSID'),
    bssid: first[1].toLowerCase(),
    frequency_mhz: num(field('freq')),
    signal_dbm: num(field('signal')),
    tx_bitrate_mbps: num(field('tx bitrate')),
    rx_bitrate_mbps: num(field('rx bitrate')),
  };
}

/** iw's answer, or why there is none (not installed, the interface refused, a timeout). */
export type IwResult = { ok: true; link: IwLink } | { ok: false; reason: string; missing: boolean };

/** Runs `<program> dev <iface> link`, bounded in time and output. */
export function iwLink(program: string, iface: string, timeoutMs = 3000): Promise<IwResult> {
  return new Promise((resolve) => {
    execFile(program, ['dev', iface, 'link'], { timeout: timeoutMs, maxBuffer: 64 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) return resolve({ ok: true, link: parseIwLink(stdout) });
      const e = err as NodeJS.ErrnoException & { killed?: boolean };
      if (e.code === 'ENOENT') return resolve({ ok: false, missing: true, reason: `${program} is not installed (Debian package iw)` });
      const words = (stderr || stdout).trim().split('\n').pop() || e.message;
      resolve({
        ok: false,
        missing: false,
        reason: e.killed ? `${program} dev ${iface} link timed out after ${timeoutMs} ms` : `${program} dev ${iface} link: ${words}`,
      });
    });
  });
}
