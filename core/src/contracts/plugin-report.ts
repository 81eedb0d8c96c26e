import { z } from 'zod';

/** One plugin of a device as status, hello and get_system_health report it. */
export const PluginReportSchema = z
  .object({
    name: z.string(),
    version: z.string(),
    layer: z.string().optional(),
    state: z.enum(['starting', 'ok', 'degraded', 'failed', 'skipped', 'stopped']),
    /** Why it failed or was skipped (`model_shape_mismatch`, `dependency_failed`, a plugin's own code…). */
    code: z.string().optional(),
    message: z.string().optional(),
  })
  .describe('a plugin and its state');
