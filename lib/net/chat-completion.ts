/** An OpenAI-compatible chat completions API: POST `<url>/chat/completions`, with a bearer key if it wants one. */
export interface ChatEndpoint {
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

/** The endpoint answered, but not a chat completion: not JSON, or no text in its first choice. */
export class ChatAnswerInvalid extends Error {}

/**
 * One chat completion: `request` (messages, max_tokens…) sent for the endpoint's model, within its
 * timeout and the caller's signal; the answer read up to `maxBytes` (a larger one is cancelled, not
 * read whole). Answers the first choice's message text. Every error is a fixed text with the cause's
 * kind, never the answer's body or the key: callers put them in tool results and logs.
 */
export async function chatCompletion(o: ChatEndpoint, request: Record<string, unknown>, maxBytes: number, signal?: AbortSignal): Promise<string> {
  let res: Response;
  try {
    res = await fetch(`${o.url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
      body: JSON.stringify({ model: o.model, ...request }),
      signal: AbortSignal.any([AbortSignal.timeout(o.timeoutMs), ...(signal ? [signal] : [])]),
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
    bytes = await readCapped(res, maxBytes);
  } catch (err) {
    const e = err as Error;
    throw new Error(`describer answer not read: ${e.name === 'TimeoutError' ? `not complete within ${o.timeoutMs} ms` : e.message}`);
  }
  if (bytes === null) throw new Error(`describer answer larger than ${maxBytes} bytes`);
  let content: unknown;
  try {
    content = (JSON.parse(bytes.toString('utf8')) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    throw new ChatAnswerInvalid('describer answer is not JSON');
  }
  if (typeof content !== 'string' || !content.trim()) throw new ChatAnswerInvalid('describer answer has no choices[0].message.content');
  return content;
}

/** The answer's body, read until `max` bytes at most: a larger one is cancelled, not read whole (null). */
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
