import { z } from 'zod';
import { definePlugin } from 'lookout/core';
import type { Detection } from 'lookout/core/contracts';
import { DieTemperatureToken } from '../../die-temp/src/service.js';
import { DetectionPipelineToken } from '../../detector/src/service.js';
import { ThermalGovernorToken } from '../../thermal/src/service.js';
import { RecordingStatusToken, type RecordingStatusSource } from '../../recorder/src/service.js';
import { answerQuestion, SafetyAnswerSchema, SafetyQuestionSchema } from './answer.js';
import type { LatestFrame, RecordingFigures } from './safety-state.js';

export const SafetyQueryConfig = z.object({
  /** OpenAI-compatible API base (POST <url>/chat/completions) that may phrase answers; unset: the device's plain answer. */
  SAFETY_DESCRIBER_URL: z.url().optional(),
  SAFETY_DESCRIBER_MODEL: z.string().min(1).default('default'),
  SAFETY_DESCRIBER_API_KEY: z.string().min(1).optional(),
  SAFETY_DESCRIBER_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(10_000),
  /** A weapon class at or over this confidence counts as a weapon (the recorder's JUSTIFY_WEAPON_CONFIDENCE default). */
  SAFETY_WEAPON_CONFIDENCE: z.coerce.number().min(0).max(1).default(0.5),
});

/**
 * conversational_safety_query: a question about the scene answered from the device's own figures
 * (the detector's latest frame, tracks, the weapons gate, thermal state). A describer may phrase the
 * text; one whose text states a count the device does not have is refused (spec 01, "What the
 * service does" 7).
 */
export default definePlugin({
  name: 'safety-query',
  version: '1.0.0',
  core: '^1',
  description: 'conversational_safety_query: answers from the device counts, optionally phrased by a describer that may not change them',
  layer: 'layer0',
  optionalRequires: [DetectionPipelineToken, DieTemperatureToken, ThermalGovernorToken, RecordingStatusToken],
  config: SafetyQueryConfig,
  tools: [
    {
      name: 'conversational_safety_query',
      readOnly: true,
      description:
        "A question about the scene answered from the device's authoritative figures (person_count, counts per class, track_ids, weapons, thermal_state) with the text in answer; a describer (SAFETY_DESCRIBER_URL) may phrase it and is overruled when it states another count",
      input: SafetyQuestionSchema,
      output: SafetyAnswerSchema,
    },
  ],
  start(ctx) {
    const pipeline = ctx.services.optional(DetectionPipelineToken);
    const dieTemp = ctx.services.optional(DieTemperatureToken);
    const governor = ctx.services.optional(ThermalGovernorToken);
    const recorder = ctx.services.optional(RecordingStatusToken);
    let latest: LatestFrame | null = null;
    if (pipeline) {
      ctx.onStop(
        pipeline.onResult((dets: Detection[]) => {
          latest = { timestamp: new Date(ctx.clock.now()).toISOString(), dets };
        }),
      );
    }
    const c = ctx.config;
    const describer = c.SAFETY_DESCRIBER_URL
      ? {
          url: c.SAFETY_DESCRIBER_URL,
          model: c.SAFETY_DESCRIBER_MODEL,
          timeoutMs: c.SAFETY_DESCRIBER_TIMEOUT_MS,
          ...(c.SAFETY_DESCRIBER_API_KEY ? { apiKey: c.SAFETY_DESCRIBER_API_KEY } : {}),
        }
      : undefined;
    ctx.tools.register('conversational_safety_query', async (args: z.output<typeof SafetyQuestionSchema>, { signal }) => {
      const recording = await recordingFigures(recorder);
      const thermal = dieTemp?.thermal();
      const suspension = governor?.suspension() ?? null;
      return answerQuestion(
        args,
        {
          deviceId: ctx.runtime.id,
          latest,
          detection: pipeline ? (suspension ? 'suspended' : 'running') : 'off',
          suspendedSince: suspension?.since ?? null,
          thermalState: thermal?.state ?? null,
          thermalReason: thermal ? thermal.reason : 'no die-temp plugin is running',
          dieTempC: dieTemp?.current() ?? null,
          weaponGate: c.SAFETY_WEAPON_CONFIDENCE,
          ...recording,
        },
        describer,
        signal,
      );
    });
  },
});

/** The recorder's figures an answer states, or why there are none. */
async function recordingFigures(recorder: RecordingStatusSource | undefined): Promise<{ recording: RecordingFigures | null; recordingReason: string | null }> {
  if (!recorder) return { recording: null, recordingReason: 'no recorder runs on this device' };
  try {
    const r = await recorder.status();
    return {
      recording: {
        is_writing_data: r.is_writing_data,
        storage_health: r.storage_health,
        total_chunks: r.total_chunks,
        latest_chunk_started_at: r.latest_chunk?.started_at ?? null,
      },
      recordingReason: null,
    };
  } catch (err) {
    return { recording: null, recordingReason: `the recorder did not answer: ${(err as Error).message}` };
  }
}
