import { z } from 'zod';
import { TimestampSchema } from './common.js';

/**
 * `devices/<device_id>/telemetry/wifi`. The spec names its content (RSSI, SSID, failover state)
 * but not its fields: only the timestamp is required, the named fields are typed when present.
 */
export const WifiTelemetryMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    rssi_dbm: z.number().optional(),
    ssid: z.string().optional(),
    failover_state: z.string().optional(),
  })
  .describe('telemetry/wifi message: RSSI, SSID, failover state');
/** A telemetry/wifi message as parsed (see WifiTelemetryMessageSchema). */
export type WifiTelemetryMessage = z.infer<typeof WifiTelemetryMessageSchema>;
