export interface DescriberOptions {
  /** Base URL of an OpenAI-compatible API: POST `<url>/chat/completions`. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

const MAX_ANSWER_BYTES = 256 * 1024;

/**
 * Asks the describer (a vision chat model on the host) for a short description of a clip: the
 * device's counts as text and one picture of the clip. The counts stay the device's own whatever it
 * answers; this only returns its text, or throws with why it has none.
 */
export async function describeClip(o: DescriberOptions, countsText: string, jpeg: Buffer): Promise<string> {
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
  const text = await res.text();
  if (text.length > MAX_ANSWER_BYTES) throw new Error(`describer answer larger than ${MAX_ANSWER_BYTES} bytes`);
  if (!res.ok) throw new Error(`describer answered HTTP ${res.status}: ${text.slice(0, 200)}`);
  let content: unknown;
  try {
    content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    throw new Error('describer answer is not JSON');
  }
  if (typeof content !== 'string' || !content.trim()) throw new Error('describer answer has no choices[0].message.content');
  return content.trim().slice(0, 2000);
}
