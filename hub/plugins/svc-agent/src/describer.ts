import { z } from 'zod';
import { ChatAnswerInvalid, chatCompletion, type ChatEndpoint } from 'lookout/lib/net';
import { PlanStepSchema, MAX_PLAN_STEPS, type PlanStep } from './plan.js';

/** An OpenAI-compatible chat completions endpoint (LOOKOUT_SVC_AGENT_DESCRIBER_URL). */
export type DescriberOptions = ChatEndpoint;

const MAX_ANSWER_BYTES = 64 * 1024;
const StepsSchema = z.object({ steps: z.array(PlanStepSchema).min(1).max(MAX_PLAN_STEPS) });

/**
 * Asks the describer to turn a request into tool calls on the named devices, as JSON. Its answer is
 * only a proposal: it is checked against the schema and the registered devices, and rejected
 * (thrown, with why; never the key or its body) otherwise.
 */
export async function planByDescriber(o: DescriberOptions, text: string, deviceIds: readonly string[], signal: AbortSignal): Promise<PlanStep[]> {
  const request = {
    max_tokens: 400,
    response_format: { type: 'json_object' },
    messages: [
      {
        role: 'system',
        content:
          'You turn a request about a camera fleet into device tool calls. Answer only JSON: {"steps":[{"device":"<id>","tool":"<tool>","arguments":{}}]}. ' +
          'Tools: conversational_safety_query {question}, get_latest_dets, get_device_health, get_recording_status, get_camera_profile, get_device_identity. ' +
          `Devices: ${deviceIds.slice(0, 200).join(', ')}`,
      },
      { role: 'user', content: text },
    ],
  };
  let steps: PlanStep[];
  try {
    steps = StepsSchema.parse(JSON.parse(await chatCompletion(o, request, MAX_ANSWER_BYTES, signal))).steps;
  } catch (err) {
    // Reached, but no plan in what it said: the answer's shape, not the describer's reachability.
    if (err instanceof ChatAnswerInvalid || err instanceof SyntaxError || err instanceof z.ZodError) {
      throw new Error('describer answer is not a plan ({"steps": [{device, tool, arguments}]})');
    }
    throw err;
  }
  const unknown = steps.find((s) => !deviceIds.includes(s.device));
  if (unknown) throw new Error(`describer named a device that is not registered: ${unknown.device.slice(0, 64)}`);
  return steps;
}
