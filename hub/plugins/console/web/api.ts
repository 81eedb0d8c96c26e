import { currentToken } from './token-store.js';

/** A hub answer that is not 2xx: its error body's code and message. */
export class HubError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when the hub answers 401: the page asks for the token. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** fetch against the hub with the token (if any) in the Authorization header: never in the URL. */
export async function hubFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = currentToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  const res = await fetch(path, { ...init, headers, credentials: 'omit', cache: 'no-store' });
  if (res.status === 401) unauthorizedListeners.forEach((l) => l());
  return res;
}

export async function getJson<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await hubFetch(path, init);
  const text = await res.text();
  const body = text ? (JSON.parse(text) as unknown) : null;
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string } } | null)?.error;
    throw new HubError(res.status, e?.code ?? 'http_error', e?.message ?? `${res.status} ${res.statusText}`);
  }
  return body as T;
}

export function postJson<T>(path: string, json: unknown): Promise<T> {
  return getJson<T>(path, { method: 'POST', body: JSON.stringify(json), headers: { 'content-type': 'application/json' } });
}

/** The response to GET `path`, or the hub's error as a HubError. */
async function okResponse(path: string, signal?: AbortSignal): Promise<Response> {
  const res = await hubFetch(path, signal ? { signal } : {});
  if (!res.ok) {
    let message = `${res.status}`;
    try {
      message = ((await res.json()) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      /* not JSON */
    }
    throw new HubError(res.status, 'http_error', message);
  }
  return res;
}

/** A binary answer (a snapshot, a clip) as an object URL: an <img>/<video> cannot send the token itself. Revoke it when done. */
export async function blobUrl(path: string, signal?: AbortSignal): Promise<string> {
  return URL.createObjectURL(await (await okResponse(path, signal)).blob());
}

/** A picture as an object URL with its capture time (the hub's X-Lookout-Captured-At, null when unknown). */
export async function pictureUrl(path: string): Promise<{ url: string; capturedAt: string | null }> {
  const res = await okResponse(path);
  return { url: URL.createObjectURL(await res.blob()), capturedAt: res.headers.get('X-Lookout-Captured-At') };
}

export const q = encodeURIComponent;
