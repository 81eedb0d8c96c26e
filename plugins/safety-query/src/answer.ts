import { z } from 'zod';
import { contradiction } from './count-check.js';
import { phrase, type DescriberOptions } from './describer.js';
import { plainAnswer, safetyState, type StateInputs } from './safety-state.js';

export const SafetyQuestionSchema = z.object({
  question: z.string().trim().min(1).max(1000).describe('the question, e.g. "is anyone at the front door?"'),
  describe: z.boolean().default(true).describe('let the configured describer phrase the answer (its counts are checked against the device)'),
});

export const SafetyAnswerSchema = z.object({
  question: z.string(),
  answer: z.string().describe('the text; its counts are the device’s'),
  answer_source: z.enum(['device', 'describer']).describe('device: the plain answer from the figures; describer: its text, checked'),
  describer_refused: z.boolean().describe('true when the describer stated a count that differs from the device’s and its text was dropped'),
  describer_reason: z.string().nullable().describe('why the answer is not the describer’s (not configured, failed, refused), null when it is'),
  describer_model: z
    .string()
    .nullable()
    .describe('the describer model asked to phrase it (SAFETY_DESCRIBER_MODEL: the promoted Track L model where the builder deployed it); null when none was'),
  device_id: z.string(),
  dets_timestamp: z.string().nullable().describe('when the detector’s frame the counts come from was processed; null before the first'),
  detection: z.enum(['running', 'suspended', 'off']),
  suspended_since: z.string().nullable(),
  person_count: z.number().int().nonnegative().describe('persons over the detector’s gate in the latest frame (authoritative)'),
  counts: z.array(z.object({ class_id: z.number().int(), label: z.string().nullable(), count: z.number().int().nonnegative() })),
  track_ids: z.array(z.number().int()),
  track_count: z.number().int().nonnegative(),
  weapons: z.object({ detected: z.boolean(), gate: z.number(), count: z.number().int().nonnegative(), labels: z.array(z.string()) }),
  thermal_state: z.string().nullable(),
  thermal_state_reason: z.string().nullable(),
  die_temp_c: z.number().nullable(),
  recording: z
    .object({ is_writing_data: z.boolean(), storage_health: z.string(), total_chunks: z.number().int(), latest_chunk_started_at: z.string().nullable() })
    .nullable()
    .describe('the recorder’s status; null without a recorder'),
  recording_reason: z.string().nullable().describe('why recording is null'),
});
export type SafetyAnswer = z.infer<typeof SafetyAnswerSchema>;

/** The figures, then the text: the describer's when it keeps to them, else the device's plain answer and why. */
export async function answerQuestion(
  args: z.output<typeof SafetyQuestionSchema>,
  inputs: StateInputs,
  describer: DescriberOptions | undefined,
  signal?: AbortSignal,
): Promise<SafetyAnswer> {
  const state = safetyState(inputs);
  const plain = (reason: string, refused = false, asked: string | null = null): SafetyAnswer => ({
    question: args.question,
    answer: plainAnswer(state),
    answer_source: 'device',
    describer_refused: refused,
    describer_reason: reason,
    describer_model: asked,
    ...state,
  });
  if (!args.describe) return plain('not asked for (describe: false)');
  if (!describer) return plain('no describer configured (SAFETY_DESCRIBER_URL is not set)');
  let text: string;
  try {
    text = await phrase(describer, args.question, JSON.stringify(state), signal);
  } catch (err) {
    return plain(`describer failed: ${(err as Error).message}`, false, describer.model);
  }
  const why = contradiction(text, state);
  if (why) return plain(`refused: ${why}; the device's counts are authoritative`, true, describer.model);
  return {
    question: args.question,
    answer: text,
    answer_source: 'describer',
    describer_refused: false,
    describer_reason: null,
    describer_model: describer.model,
    ...state,
  };
}
