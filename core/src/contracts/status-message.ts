import { z } from 'zod';
import { PluginReportSchema } from './plugin-report.js';
import { MaybeCelsiusSchema, DeviceIdSchema, PresenceSchema, ThermalStateSchema, TimestampSchema } from './common.js';

/**
 * `devices/<device_id>/status`, retained, QoS 1 (spec 01 and DESIGN.md "Wire decisions"). The
 * last-will is a valid status message with `state: "offline"`; as the broker stores it at connect
 * time, its `timestamp` and `die_temp_c` are those of that moment, so readers date an offline
 * status by when they received it.
 */
export const StatusMessageSchema = z
  .looseObject({
    state: PresenceSchema,
    /** Follows the die at every layer; null while it cannot be known (no reading yet, invalid thresholds). */
    thermal_state: ThermalStateSchema.nullable(),
    /** Why thermal_state is null; null (or absent) while it is known. */
    thermal_state_reason: z.string().nullable().optional(),
    die_temp_c: MaybeCelsiusSchema,
    timestamp: TimestampSchema,
    device_id: DeviceIdSchema.optional(),
    /** With the thermal governor (layer 4): while it suspends neural work, since when and why; null otherwise. */
    detection_suspended: z.looseObject({ since: TimestampSchema, reason: z.string() }).nullable().optional(),
    /** Every plugin with its state: a failed plugin shows here with its code (absent in the last-will). */
    plugins: z.array(PluginReportSchema).optional(),
  })
  .describe('status message (spec 01, DESIGN.md wire decisions)');
export type StatusMessage = z.infer<typeof StatusMessageSchema>;
