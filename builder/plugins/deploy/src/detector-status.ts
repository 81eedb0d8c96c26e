import { LookoutError } from 'lookout/core';

/** What the deploy reads of get_rfdetr_status. */
export interface DetectorStatus {
  package_version: string | null;
  ontology_hash: string | null;
  train_job_id: string | null;
  model_path: string | null;
  /** Set when the detector's model failed its checks at start (the detector runs as a failed plugin). */
  model_error: { code: string; message: string } | null;
}

/** get_rfdetr_status of a device, asked through the hub (`POST /tools/call?target=<device>`). */
export async function detectorStatus(
  o: { hubUrl: string; hubToken?: string; timeoutMs: number },
  device: string,
  signal: AbortSignal,
): Promise<DetectorStatus> {
  const url = `${o.hubUrl.replace(/\/+$/, '')}/tools/call?target=${encodeURIComponent(device)}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(o.hubToken ? { authorization: `Bearer ${o.hubToken}` } : {}) },
      body: JSON.stringify({ tool: 'get_rfdetr_status', arguments: {} }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(o.timeoutMs)]),
    });
  } catch (err) {
    if (signal.aborted) throw signal.reason as Error;
    throw new LookoutError(
      'deploy.status_unavailable',
      `get_rfdetr_status of ${device}: the hub at ${new URL(url).origin} did not answer (${(err as Error).message})`,
    );
  }
  const body = (await res.json().catch(() => ({}))) as { result?: Partial<DetectorStatus>; error?: { message?: string } };
  if (!res.ok || !body.result) {
    throw new LookoutError('deploy.status_unavailable', `get_rfdetr_status of ${device}: ${res.status} ${body.error?.message ?? 'no result'}`);
  }
  const r = body.result;
  return {
    package_version: r.package_version ?? null,
    ontology_hash: r.ontology_hash ?? null,
    train_job_id: r.train_job_id ?? null,
    model_path: r.model_path ?? null,
    model_error: r.model_error && typeof r.model_error.message === 'string' ? { code: String(r.model_error.code), message: r.model_error.message } : null,
  };
}
