import type { TrackLArtifact } from './service.js';

/**
 * What a promoted Track L model gives the describers. Its deploy is host environment variables (spec
 * 02); the two that name its serving endpoint are the ones OpenAI-compatible clients read:
 * OPENAI_BASE_URL (the API base, POST <base>/chat/completions) and OPENAI_MODEL (the model name to
 * ask for; the artifact's name when unset). No key travels: each describer keeps its own.
 */
export const ENDPOINT_URL_KEY = 'OPENAI_BASE_URL';
export const ENDPOINT_MODEL_KEY = 'OPENAI_MODEL';

export interface DescriberEndpoint {
  url: string;
  model: string;
  /** The Track L artifact it is (name). */
  artifact: string;
}

/** The endpoint named in `host_env`, or why there is none (not an http(s) URL). */
export function endpointProblem(hostEnv: Record<string, string>): string | null {
  const url = hostEnv[ENDPOINT_URL_KEY];
  if (url === undefined) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? null : `${ENDPOINT_URL_KEY} must be an http(s) URL, not ${u.protocol}`;
  } catch {
    return `${ENDPOINT_URL_KEY} is not a URL`;
  }
}

export function describerOf(a: TrackLArtifact): DescriberEndpoint | null {
  const url = a.host_env?.[ENDPOINT_URL_KEY];
  if (!url || endpointProblem(a.host_env ?? {})) return null;
  return { url, model: a.host_env?.[ENDPOINT_MODEL_KEY] || a.name, artifact: a.name };
}
