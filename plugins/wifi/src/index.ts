import { z } from 'zod';
import { definePlugin, toLookoutError } from 'lookout/core';
import { busTopic } from 'lookout/core/contracts';
import type { Uplink, WifiMessage } from './service.js';
import { readRadio, readUplink, type WifiSources } from './wifi-reading.js';

export const WifiConfig = z.object({
  WIFI_INTERFACE: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,15}$/, 'a network interface name')
    .optional()
    .describe('the wireless interface to report; default the first the kernel lists'),
  WIFI_PROC_WIRELESS: z.string().min(1).default('/proc/net/wireless'),
  WIFI_PROC_ROUTE: z.string().min(1).default('/proc/net/route'),
  WIFI_SYS_NET: z.string().min(1).default('/sys/class/net'),
  WIFI_IW: z.string().min(1).default('iw').describe('the iw program (nl80211: SSID, BSSID, frequency); off to skip it'),
  WIFI_INTERVAL_MS: z.coerce.number().int().min(100).default(10_000),
  WIFI_PRIMARY: z
    .enum(['wifi', 'wired', 'cellular'])
    .default('wifi')
    .describe('the uplink kind that is the primary; the default route on another kind is a failover'),
});

const same = (a: Uplink | null, b: Uplink | null) => a?.interface === b?.interface && a?.kind === b?.kind;

/**
 * Wi-Fi telemetry (spec 01, `telemetry/wifi`): RSSI, SSID, link quality of the wireless interface
 * (/proc/net/wireless, and nl80211 through `iw` where it is installed), and the failover state: the
 * kind of link the default route takes (/proc/net/route) against WIFI_PRIMARY, with the change
 * reported when it moves. A device without Wi-Fi says why once and stays healthy.
 */
export default definePlugin({
  name: 'wifi',
  version: '1.0.0',
  core: '^1',
  description: 'Wi-Fi RSSI, SSID, link quality and uplink failover state on telemetry/wifi',
  layer: 'layer0',
  config: WifiConfig,
  topics: [busTopic('telemetry/wifi')],
  async start(ctx) {
    const { config, clock, log } = ctx;
    const sources: WifiSources = {
      procWireless: config.WIFI_PROC_WIRELESS,
      procRoute: config.WIFI_PROC_ROUTE,
      sysNet: config.WIFI_SYS_NET,
      iw: config.WIFI_IW === 'off' ? null : config.WIFI_IW,
      ...(config.WIFI_INTERFACE ? { iface: config.WIFI_INTERFACE } : {}),
    };
    let uplink: Uplink | null | undefined;
    let previous: Uplink | null = null;
    let failoverSince: string | null = null;
    let said: string | null = null;
    let nl80211Said: string | null = null;
    let unavailableSaid: string | null = null;
    let busy = false;
    // A (re)connect is owed a message even when a tick is running or nothing changed.
    let owed = false;
    // Ticks publish once the bus has told this connect: its listeners run after the resubscribe, and
    // a tick in between would say the state that the connect's owed message says again.
    let live = false;

    const tick = async (force: boolean) => {
      owed ||= force;
      if (busy) return;
      busy = true;
      try {
        const now = new Date(clock.now()).toISOString();
        const { radio, wireless } = await readRadio(sources);
        const up = await readUplink(sources, wireless);
        const moved = uplink !== undefined && !same(uplink, up);
        if (uplink === undefined || moved) {
          if (moved) {
            previous = uplink ?? null;
            log.warn(
              { from: previous, to: up },
              `uplink moved from ${previous ? `${previous.interface} (${previous.kind})` : 'none'} to ${up ? `${up.interface} (${up.kind})` : 'none'}`,
            );
          }
          failoverSince = now;
          uplink = up;
        }
        const failover_state = !up ? 'down' : up.kind === config.WIFI_PRIMARY ? 'primary' : 'failover';
        const { rssi_dbm, ssid, ...rest } = radio;
        const message: WifiMessage = {
          timestamp: now,
          ...(rssi_dbm !== null ? { rssi_dbm } : {}),
          ...(ssid !== null ? { ssid } : {}),
          ...rest,
          uplink: up,
          failover_state,
          failover_since: failoverSince,
          previous_uplink: previous,
        };
        // Said once: no Wi-Fi here (or iw missing) is a fact of the device, not news every interval.
        const key = `${radio.state}|${radio.reason}|${up?.interface}|${up?.kind}`;
        if (radio.state === 'unavailable' && radio.reason !== unavailableSaid) log.info({ reason: radio.reason }, `no Wi-Fi telemetry: ${radio.reason}`);
        unavailableSaid = radio.state === 'unavailable' ? radio.reason : null;
        if (radio.nl80211 && radio.nl80211 !== nl80211Said) log.info(`no SSID or BSSID: ${radio.nl80211}`);
        nl80211Said = radio.nl80211;
        const news = radio.state !== 'unavailable' || key !== said || moved;
        // Only what was published counts as said: a reading while the bus is away is said on connect.
        if (!ctx.bus.connected) live = false;
        if ((news || owed) && live) {
          owed = false;
          said = key;
          await ctx.bus.publish('telemetry/wifi', message);
        }
      } catch (err) {
        log.warn({ code: toLookoutError(err).code }, `telemetry/wifi not published: ${toLookoutError(err).message}`);
      } finally {
        busy = false;
      }
    };

    ctx.bus.onConnect(() => {
      live = true;
      void tick(true);
    });
    clock.setInterval(() => void tick(false), config.WIFI_INTERVAL_MS);
    log.info({ procWireless: sources.procWireless, iw: sources.iw, intervalMs: config.WIFI_INTERVAL_MS }, 'Wi-Fi telemetry reading');
  },
});
