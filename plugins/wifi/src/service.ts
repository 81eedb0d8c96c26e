import { z } from 'zod';
import { WifiTelemetryMessageSchema } from 'lookout/core/contracts';

const Uplink = z.object({
  interface: z.string(),
  kind: z.enum(['wifi', 'wired', 'cellular']),
  gateway: z.string(),
});

/**
 * Our telemetry/wifi message: the contract's (timestamp, rssi_dbm, ssid, failover_state) with the
 * association, the link quality and the uplink the default route takes.
 */
export const WifiMessageSchema = WifiTelemetryMessageSchema.extend({
  /** connected: associated; disconnected: a wireless interface, not associated; unavailable: none here. */
  state: z.enum(['connected', 'disconnected', 'unavailable']),
  reason: z.string().nullable().describe('why disconnected or unavailable'),
  interface: z.string().nullable(),
  // The contract's two: absent (not null) while unknown, as the contract types them.
  rssi_dbm: z.number().optional().describe('signal level in dBm; absent while not associated'),
  ssid: z.string().optional().describe('absent while not associated or without iw'),
  bssid: z.string().nullable(),
  noise_dbm: z.number().nullable(),
  link_quality_pct: z.number().min(0).max(100).nullable().describe('the driver’s link figure over its 70 scale'),
  frequency_mhz: z.number().nullable(),
  tx_bitrate_mbps: z.number().nullable(),
  nl80211: z.string().nullable().describe('why iw (nl80211) gave nothing: SSID and BSSID are then null'),
  uplink: Uplink.nullable().describe('where the default route leaves; null without one'),
  /** primary: the default route is on WIFI_PRIMARY's kind; failover: on another kind; down: no default route. */
  failover_state: z.enum(['primary', 'failover', 'down']),
  failover_since: z.string().nullable(),
  previous_uplink: Uplink.nullable().describe('the uplink before the last change'),
});
export type WifiMessage = z.infer<typeof WifiMessageSchema>;
export type Uplink = z.infer<typeof Uplink>;
