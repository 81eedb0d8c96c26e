import type { PlanStep } from './plan.js';

/** Read-only tools a request's words point at, first match wins. Mutating tools are never inferred: they are asked for structured. */
const RULES: [RegExp, (text: string) => Pick<PlanStep, 'tool' | 'arguments'>][] = [
  [
    /\b(how many|count|people|persons?|anyone|anybody|someone|safe|weapons?|guns?|knife|intruders?)\b/i,
    (text) => ({ tool: 'conversational_safety_query', arguments: { question: text } }),
  ],
  [/\b(record(ing|ed)?|chunks?|storage)\b/i, () => ({ tool: 'get_recording_status', arguments: {} })],
  [/\b(detections?|dets)\b/i, () => ({ tool: 'get_latest_dets', arguments: {} })],
  [/\b(profile|codec|bitrate|resolution)\b/i, () => ({ tool: 'get_camera_profile', arguments: {} })],
  [/\b(identity|fingerprint|serial)\b/i, () => ({ tool: 'get_device_identity', arguments: {} })],
  [/\b(health|status|temperature|thermal|plugins?)\b/i, () => ({ tool: 'get_device_health', arguments: {} })],
];

const EVERY = /\b(all|every|each|fleet)\b/i;

/**
 * A natural-language request resolved without a model: the first rule its words match names the
 * tool; the registered device ids it names (or every device for "all cameras") are the devices.
 * Null, with why, when it names no tool or no device.
 */
export function resolveByRules(text: string, deviceIds: readonly string[], maxSteps: number): { steps: PlanStep[] } | { unresolved: string } {
  const rule = RULES.find(([re]) => re.test(text));
  if (!rule) return { unresolved: 'no rule matches the request (ask about people, weapons, recording, detections, profile, identity or health)' };
  const lower = text.toLowerCase();
  const named = deviceIds.filter((id) => new RegExp(`(^|[^a-z0-9_.-])${escape(id.toLowerCase())}($|[^a-z0-9_-])`).test(lower));
  const devices = named.length > 0 ? named : EVERY.test(text) ? deviceIds.slice(0, maxSteps) : [];
  if (devices.length === 0) return { unresolved: 'the request names no registered device (name one, or say "all cameras")' };
  const call = rule[1](text);
  return { steps: devices.map((device) => ({ device, ...call })) };
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
