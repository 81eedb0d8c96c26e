import { z } from 'zod';
import { PluginReportSchema } from './plugin-report.js';
import { MaybeCelsiusSchema, DeviceIdSchema, PresenceSchema, ThermalStateSchema, TimestampSchema } from './common.js';

/**
 * `devices/<device_id>/status`, retained, QoS 1 (spec 01 and DESIGN.md "Wire decisions"). The
 * last-will is a valid status message with `state: "offline"`; as the broker stores it at connect
 * time and sends it at an unknown later moment, it has no `timestamp` but `will_set_at`, and no
 * current temperature (null, with the reason): readers date it by when they received it.
 */
export const StatusMessageSchema = z
  .looseObject({
    state: PresenceSchema,
    /** Follows the die at every layer; null while it cannot be known (no reading yet, invalid thresholds). */
    thermal_state: ThermalStateSchema.nullable(),
    /** Why thermal_state is null; null (or absent) while it is known. */
    thermal_state_reason: z.string().nullable().optional(),
    die_temp_c: MaybeCelsiusSchema,
    /** When the device published it; absent only in the last-will, which has `will_set_at` instead. */
    timestamp: TimestampSchema.optional(),
    /** The last-will's: when the device set it (at connect), not when the broker sent it. */
    will_set_at: TimestampSchema.optional(),
    device_id: DeviceIdSchema.optional(),
    /** With the thermal governor (layer 4): while it suspends neural work, since when and why; null otherwise. */
    detection_suspended: z.looseObject({ since: TimestampSchema, reason: z.string() }).nullable().optional(),
    /** Every plugin with its state: a failed plugin shows here with its code (absent in the last-will). */
    plugins: z.array(PluginReportSchema).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.timestamp === undefined && m.will_set_at === undefined) {
      ctx.addIssue({ code: 'custom', path: ['timestamp'], message: 'required (only a last-will has will_set_at instead)' });
    }
  })
  .describe('status message (spec 01, DESIGN.md wire decisions)');
/** A status message as parsed (see StatusMessageSchema). */
export type StatusMessage = z.infer<typeof StatusMessageSchema>;
