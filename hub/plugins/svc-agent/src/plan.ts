import { z } from 'zod';
import { TOOL_LIMITS } from 'lookout/core';

/** Steps one plan may hold: a plan is an agent's few calls, not a fleet sweep. */
export const MAX_PLAN_STEPS = 50;

export const PlanStepSchema = z.object({
  device: z.string().min(1).max(256).describe('device id, address or label, as POST /tools/call takes it in target'),
  tool: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/)
    .max(TOOL_LIMITS.maxToolNameChars)
    .describe('a tool the device declares (tools/list)'),
  arguments: z.record(z.string(), z.unknown()).default({}),
});
export type PlanStep = z.output<typeof PlanStepSchema>;

export const PlanSchema = z.object({
  steps: z.array(PlanStepSchema).min(1).max(MAX_PLAN_STEPS),
  approved: z.boolean().default(false).describe('a person approved the plan: its mutating steps may run (with the approval token)'),
});

export const ResolveBodySchema = z
  .object({
    text: z.string().trim().min(1).max(2000).optional().describe('a request in natural language ("how many people are at cam-1?")'),
    tool: PlanStepSchema.shape.tool.optional().describe('structured: the tool to call'),
    devices: z.array(PlanStepSchema.shape.device).min(1).max(MAX_PLAN_STEPS).optional().describe('structured: the devices to call it on'),
    arguments: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((b) => (b.text !== undefined) !== (b.tool !== undefined), { message: 'give either text or tool (with devices)' })
  .refine((b) => b.tool === undefined || b.devices !== undefined, { message: 'a structured request names its devices', path: ['devices'] });

export const ResolveResponseSchema = z.object({
  plan: PlanSchema,
  resolved_by: z.enum(['structured', 'rules', 'describer']),
  note: z.string().nullable().describe('why rules resolved it although a describer is set (its answer was not a plan), else null'),
  describer: z
    .object({
      model: z.string(),
      source: z.enum(['env', 'track-l']).describe('env: LOOKOUT_SVC_AGENT_DESCRIBER_URL; track-l: the builder’s promoted Track L model'),
      artifact: z.string().nullable().describe('the promoted Track L artifact, null for env'),
    })
    .optional()
    .describe('the describer asked for a text request (absent when none is set or promoted, and for a structured one)'),
});

export const ExecuteBodySchema = z.object({
  plan: PlanSchema,
  dry_run: z.boolean().default(false).describe('answer what would run and what would be refused; nothing is called'),
  agent: z.string().min(1).max(128).optional().describe('who runs it, for the audit records'),
});

const StepReportSchema = z.object({
  index: z.number().int(),
  device_id: z.string(),
  tool: z.string(),
  read_only: z.boolean().describe("the device's readOnlyHint for the tool"),
  decision: z.enum(['run', 'would_run', 'refused']),
  reason: z.string().nullable(),
  status: z.enum(['ok', 'error']).nullable().describe('null when it did not run'),
  result: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

export const ExecuteResponseSchema = z.object({
  dry_run: z.boolean(),
  approved: z.boolean(),
  steps: z.array(StepReportSchema),
});
export type StepReport = z.infer<typeof StepReportSchema>;
