import { z } from 'lookout/core';

export const LaunchBody = z.object({
  epochs: z.number().int().min(1).max(10_000).describe('example 25, or 50 for larger recipes'),
  batch_size: z.number().int().min(1).max(4096).describe('example 8'),
  gpu_type: z
    .string()
    .regex(/^[A-Z0-9_]{2,64}$/)
    .default('NVIDIA_TESLA_T4')
    .describe('a Vertex AI accelerator type; the local executor records it'),
  gcs_dataset: z.string().min(1).max(2048).describe('the dataset location: gs:// for vertex; a local folder (or file://) for local'),
  recipe: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/)
    .default('rfdetr')
    .describe('rfdetr (544), rfdetr-omni (672), test-double'),
  input_size: z
    .number()
    .int()
    .min(64)
    .max(2048)
    .multipleOf(32)
    .optional()
    .describe("the export's fixed side: ONNX input [1, 3, H, W]; the recipe's default when absent"),
  executor: z.enum(['local', 'vertex']).default('local'),
  ontology: z.string().min(1).max(128).default('default').describe('its newest compiled labels are the classes trained'),
  time_limit_s: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .optional(),
  options: z
    .record(z.string().max(64), z.union([z.string().max(1024), z.number(), z.boolean()]))
    .default({})
    .describe('recipe knobs, passed through'),
});
export type LaunchRequest = z.output<typeof LaunchBody>;
