export interface DescriberOptions {
  /** Base URL of an OpenAI-compatible API: POST `<url>/chat/completions`. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export const MAX_ANSWER_BYTES = 256 * 1024;

/** Bearer tokens anywhere in a text (an answer or an error that echoes the request's headers). */
export function redactSecrets(text: string): string {
  return text.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]');
}

/** The answer's body, read until `max` bytes at most: a larger one is cancelled, not read whole. */
async function readCapped(res: Response, max: number): Promise<Buffer | null> {
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(parts);
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    parts.push(value);
  }
}

/**
 * Asks the describer (a vision chat model on the host) for a short description of a clip: the
 * device's counts as text and one picture of the clip. The counts stay the device's own whatever it
 * answers; this only returns its text, or throws with why it has none. Nothing of the answer's body
 * goes into an error (status and a fixed message only), and bearer tokens are redacted from the
 * text and the errors, so the API key never reaches a tool result, an alert or the ring.
 */
export async function describeClip(o: DescriberOptions, countsText: string, jpeg: Buffer): Promise<string> {
  try {
    return redactSecrets(await ask(o, countsText, jpeg));
  } catch (err) {
    throw new Error(redactSecrets((err as Error).message));
  }
}

async function ask(o: DescriberOptions, countsText: string, jpeg: Buffer): Promise<string> {
  const signals = [AbortSignal.timeout(o.timeoutMs), ...(o.signal ? [o.signal] : [])];
  const body = {
    model: o.model,
    max_tokens: 200,
    messages: [
      {
        role: 'system',
        content:
          'You describe short security-camera clips in one or two sentences. The detection counts given are authoritative; do not restate different numbers.',
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: countsText },
          { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}` } },
        ],
      },
    ],
  };
  let res: Response;
  try {
    res = await fetch(`${o.url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.any(signals),
    });
  } catch (err) {
    const e = err as Error;
    const why = e.name === 'TimeoutError' ? `no answer within ${o.timeoutMs} ms` : ((e.cause as Error | undefined)?.message ?? e.message);
    throw new Error(`describer unreachable: ${why}`);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`describer answered HTTP ${res.status}`);
  }
  let bytes: Buffer | null;
  try {
    bytes = await readCapped(res, MAX_ANSWER_BYTES);
  } catch (err) {
    const e = err as Error;
    throw new Error(`describer answer not read: ${e.name === 'TimeoutError' ? `not complete within ${o.timeoutMs} ms` : e.message}`);
  }
  if (bytes === null) throw new Error(`describer answer larger than ${MAX_ANSWER_BYTES} bytes`);
  const text = bytes.toString('utf8');
  let content: unknown;
  try {
    content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    throw new Error('describer answer is not JSON');
  }
  if (typeof content !== 'string' || !content.trim()) throw new Error('describer answer has no choices[0].message.content');
  return content.trim().slice(0, 2000);
}
