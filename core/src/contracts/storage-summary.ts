import { z } from 'zod';
import { NonNegativeIntSchema, PercentSchema } from './common.js';

/** Storage summary carried by `health` (spec 01: "a storage summary"); the recordings volume. */
export const StorageSummarySchema = z
  .looseObject({
    free_gb: z.number().nonnegative(),
    used_pct: PercentSchema,
    total_gb: z.number().nonnegative().optional(),
    path: z.string().optional().describe('recordings folder the figures describe'),
    chunk_count: NonNegativeIntSchema.optional(),
  })
  .describe('storage summary of the recordings volume');
/** A storage summary as parsed (see StorageSummarySchema). */
export type StorageSummary = z.infer<typeof StorageSummarySchema>;
