import { z } from 'zod';
import { PlanStepSchema, MAX_PLAN_STEPS, type PlanStep } from './plan.js';

/** An OpenAI-compatible chat completions endpoint (LOOKOUT_SVC_AGENT_DESCRIBER_URL). */
export interface DescriberOptions {
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

const MAX_ANSWER_BYTES = 64 * 1024;
const StepsSchema = z.object({ steps: z.array(PlanStepSchema).min(1).max(MAX_PLAN_STEPS) });

/**
 * Asks the describer to turn a request into tool calls on the named devices, as JSON. Its answer is
 * only a proposal: it is checked against the schema and the registered devices, and rejected
 * (thrown, with why; never the key or its body) otherwise.
 */
export async function planByDescriber(o: DescriberOptions, text: string, deviceIds: readonly string[], signal: AbortSignal): Promise<PlanStep[]> {
  const body = {
    model: o.model,
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
  let res: Response;
  try {
    res = await fetch(`${o.url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.any([AbortSignal.timeout(o.timeoutMs), signal]),
    });
  } catch (err) {
    const e = err as Error;
    throw new Error(
      `describer unreachable: ${e.name === 'TimeoutError' ? `no answer within ${o.timeoutMs} ms` : ((e.cause as Error | undefined)?.message ?? e.message)}`,
    );
  }
  if (!res.ok || Number(res.headers.get('content-length') ?? 0) > MAX_ANSWER_BYTES) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(res.ok ? `describer answer larger than ${MAX_ANSWER_BYTES} bytes` : `describer answered HTTP ${res.status}`);
  }
  const raw = await res.text();
  if (raw.length > MAX_ANSWER_BYTES) throw new Error(`describer answer larger than ${MAX_ANSWER_BYTES} bytes`);
  let steps: PlanStep[];
  try {
    const content = (JSON.parse(raw) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    steps = StepsSchema.parse(JSON.parse(typeof content === 'string' ? content : '')).steps;
  } catch {
    throw new Error('describer answer is not a plan ({"steps": [{device, tool, arguments}]})');
  }
  const unknown = steps.find((s) => !deviceIds.includes(s.device));
  if (unknown) throw new Error(`describer named a device that is not registered: ${unknown.device.slice(0, 64)}`);
  return steps;
}
