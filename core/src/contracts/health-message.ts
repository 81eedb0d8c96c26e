import { z } from 'zod';
import { DeviceIdSchema, RoleLabelSchema, StorageHealthSchema, TimestampSchema } from './common.js';
import { StorageSummarySchema } from './storage-summary.js';
import { PluginReportSchema } from './plugin-report.js';

/**
 * `devices/<device_id>/health`, about every 30 s (spec 01, "health message"). The spec does not
 * list the values of `status`, so it is a non-empty string (the health plugin writes e.g. `ok`).
 */
export const HealthMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    status: z.string().min(1).describe('overall health, e.g. ok or degraded'),
    storage_health: StorageHealthSchema,
    cert_fingerprint_present: z.boolean(),
    serial: z.string().min(1),
    role: RoleLabelSchema,
    storage: StorageSummarySchema,
    device_id: DeviceIdSchema.optional(),
    /** Every plugin with its state (a failed one with its code and message). */
    plugins: z.array(PluginReportSchema).optional(),
  })
  .describe('health message (spec 01)');
/** A health message as parsed (see HealthMessageSchema). */
export type HealthMessage = z.infer<typeof HealthMessageSchema>;
