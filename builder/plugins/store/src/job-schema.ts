import { z } from 'lookout/core';

/** Spec 02's builder job states (here, beside the wire schema, so that service.ts can re-export both without a cycle). */
export const JOB_STATES = ['QUEUED', 'TRAINING', 'TRAINING_COMPLETE', 'COMPILING', 'COMPILE_COMPLETE', 'DEPLOYING', 'DEPLOYED', 'FAILED'] as const;

const time = z.string().describe('ISO 8601 time');

export const JobSchema = z.object({
  id: z.string(),
  kind: z.string().describe('train, compile, deploy…: the stage that runs it'),
  state: z.enum(JOB_STATES),
  reason: z.string().nullable().describe('why it FAILED'),
  progress: z.number().min(0).max(1),
  progress_note: z.string().nullable(),
  executor: z.string().nullable(),
  parent_id: z.string().nullable(),
  params: z.record(z.string(), z.unknown()),
  result: z.record(z.string(), z.unknown()).nullable(),
  created_at: time,
  updated_at: time,
  started_at: time.nullable(),
  finished_at: time.nullable(),
});

export const JobLogSchema = z.object({
  job_id: z.string(),
  lines: z.array(z.object({ seq: z.number().int(), at: time, stream: z.enum(['stdout', 'stderr', 'event']), line: z.string() })),
});
