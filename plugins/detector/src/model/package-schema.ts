import { z } from 'zod';
import { MODEL_BACKEND_NAMES } from '../backends/backend-records.js';

/** config.json of a detector package (spec 02: model, backend, backend_properties). */
export const PackageConfigSchema = z
  .object({
    model: z
      .string()
      .min(1)
      .refine((s) => !s.includes('..') && !s.startsWith('/'), 'model must be a file name inside the package')
      .describe('model file name inside the package, e.g. rf_detr_qcs8550.dlc'),
    backend: z.enum(MODEL_BACKEND_NAMES).describe('runtime the package was compiled for'),
    backend_properties: z
      .object({
        runtime: z.enum(['dsp', 'gpu', 'cpu']),
        performance_profile: z.enum(['high_performance', 'sustained_high_performance', 'burst', 'balanced', 'power_saver', 'low_balanced', 'default']),
      })
      .passthrough(),
  })
  .passthrough();
export type PackageConfig = z.infer<typeof PackageConfigSchema>;

const dim = z.number().int().positive();

/**
 * labels.json: the class list versioned with the model file (DESIGN.md). `remap` maps a model class
 * index (JSON object key) to a production class id; it is required for every map but production.
 */
export const PackageLabelsSchema = z
  .object({
    classes: z.array(z.string()).min(1).describe('model class index -> label'),
    class_map: z.enum(['production', 'omni15', 'custom']),
    version: z.string().min(1),
    ontology_hash: z.string().min(1),
    train_job_id: z.string().min(1),
    input_shape: z.tuple([z.literal(1), z.literal(3), dim, dim]).describe('[1, 3, H, W] NCHW'),
    remap: z.record(z.string().regex(/^\d+$/, 'remap keys are model class indices'), z.number().int().min(0)).optional(),
  })
  .passthrough();
export type PackageLabels = z.infer<typeof PackageLabelsSchema>;

/** zod issues as one readable line for error messages. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}
