import { v1 } from '@google-cloud/aiplatform';
import { LookoutError } from 'lookout/core';

/**
 * Google's Vertex AI client (`@google-cloud/aiplatform`) as the `vertex` executor opens it. It speaks
 * the library's REST transport (`fallback`), the same JSON Vertex AI's REST v1 takes: one transport
 * in production and in the tests, whose 127.0.0.1 server stands in for Google (plain http is allowed
 * for loopback only). Credentials are Google's default (GOOGLE_APPLICATION_CREDENTIALS, else gcloud's
 * or the metadata server's); the library signs a service account's token itself.
 */

export type JobServiceClient = v1.JobServiceClient;

export interface VertexEndpoint {
  /** https://host[:port] or, for a test's loopback server, http://127.x.y.z:port. */
  origin: string;
  host: string;
  port: number;
  protocol: 'https' | 'http';
}

/** The endpoint to reach, or why it cannot be used. */
export function vertexEndpoint(url: string): VertexEndpoint | string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `the Vertex AI endpoint ${url} is not a URL`;
  }
  const protocol = u.protocol === 'https:' ? 'https' : u.protocol === 'http:' ? 'http' : undefined;
  if (!protocol) return `the Vertex AI endpoint ${url} is neither https nor http`;
  // Credentials never cross a network in clear: plain http only to this machine.
  if (protocol === 'http' && !/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(u.hostname))
    return `the Vertex AI endpoint ${url} is plain http to another machine; use https`;
  return { origin: u.origin, host: u.hostname, port: Number(u.port || (protocol === 'https' ? 443 : 80)), protocol };
}

/** The library's client for that endpoint; `credentialsFile` overrides the default credentials. */
export function openJobService(e: VertexEndpoint, credentialsFile: string | undefined): JobServiceClient {
  return new v1.JobServiceClient({
    apiEndpoint: e.host.replace(/^\[|\]$/g, ''),
    port: e.port,
    fallback: true,
    protocol: e.protocol,
    ...(credentialsFile ? { keyFilename: credentialsFile } : {}),
  });
}

/** Google's default credentials, loaded (no request yet): a clear error where there are none. */
export async function checkCredentials(client: JobServiceClient, credentialsFile: string | undefined): Promise<void> {
  try {
    await client.auth.getClient();
  } catch (err) {
    const where = credentialsFile
      ? `GOOGLE_APPLICATION_CREDENTIALS=${credentialsFile}`
      : 'no GOOGLE_APPLICATION_CREDENTIALS, no gcloud login, no metadata server';
    throw new LookoutError(
      'training.executor_not_configured',
      `the vertex executor has no Google credentials (${where}: ${(err as Error).message.split('\n')[0]}); set GOOGLE_APPLICATION_CREDENTIALS to a service account key file`,
      { details: { executor: 'vertex' } },
    );
  }
}

/** A failed call as the builder's error: unreachable (named endpoint) or the service's refusal. */
export function vertexError(err: unknown, e: VertexEndpoint, what: string): LookoutError {
  if (err instanceof LookoutError) return err;
  const x = err as { code?: unknown; message?: string; cause?: { code?: unknown } };
  // A socket's error code (ECONNREFUSED, ENOTFOUND, UND_ERR_…): the request never got an answer.
  const net = [x.code, x.cause?.code].find((c): c is string => typeof c === 'string' && /^(E[A-Z]+|UND_ERR_\w+)$/.test(c));
  if (net || /timeout|timed out|aborted/i.test(x.message ?? ''))
    return new LookoutError('training.service_unreachable', `Vertex AI at ${e.origin} is not reachable from this builder (${net ?? 'timed out'})`, {
      details: { endpoint: e.origin },
    });
  return new LookoutError('training.service_failed', `Vertex AI refused ${what}: ${googleReason(x.message ?? String(err)).slice(0, 300)}`, {
    details: { endpoint: e.origin, ...(typeof x.code === 'number' || typeof x.code === 'string' ? { status: String(x.code) } : {}) },
  });
}

/** Google's error body ({"error": {"status", "message"}}) as "STATUS: message"; other text as is. */
function googleReason(text: string): string {
  try {
    const g = (JSON.parse(text) as { error?: { status?: unknown; message?: unknown } }).error;
    if (typeof g?.message === 'string') return typeof g.status === 'string' ? `${g.status}: ${g.message}` : g.message;
  } catch {
    // not JSON: the library's own message
  }
  return text;
}
