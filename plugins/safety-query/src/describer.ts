/** An OpenAI-compatible chat completions endpoint (SAFETY_DESCRIBER_URL), the same shape the recorder's video_understand describer calls. */
export interface DescriberOptions {
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Asks the describer to phrase an answer to `question` from the device's figures (a JSON text). Its
 * text is checked against the counts by the caller; this only returns it or throws why there is
 * none. Neither the key nor the answer's body goes into an error.
 */
export async function phrase(o: DescriberOptions, question: string, figures: string, signal?: AbortSignal): Promise<string> {
  const body = {
    model: o.model,
    max_tokens: 200,
    messages: [
      {
        role: 'system',
        content:
          "You answer a question about a security camera in one or two sentences from the device's figures (JSON). The counts are authoritative: state no other numbers.",
      },
      { role: 'user', content: `Figures: ${figures}\nQuestion: ${question}` },
    ],
  };
  let res: Response;
  try {
    res = await fetch(`${o.url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.any([AbortSignal.timeout(o.timeoutMs), ...(signal ? [signal] : [])]),
    });
  } catch (err) {
    const e = err as Error;
    throw new Error(
      `describer unreachable: ${e.name === 'TimeoutError' ? `no answer within ${o.timeoutMs} ms` : ((e.cause as Error | undefined)?.message ?? e.message)}`,
    );
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`describer answered HTTP ${res.status}`);
  }
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > MAX_ANSWER_BYTES) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`describer answer larger than ${MAX_ANSWER_BYTES} bytes`);
  }
  const text = await res.text();
  if (text.length > MAX_ANSWER_BYTES) throw new Error(`describer answer larger than ${MAX_ANSWER_BYTES} bytes`);
  let content: unknown;
  try {
    content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    throw new Error('describer answer is not JSON');
  }
  if (typeof content !== 'string' || !content.trim()) throw new Error('describer answer has no choices[0].message.content');
  return content
    .trim()
    .replace(/Bearer\s+\S+/gi, 'Bearer [redacted]')
    .slice(0, 2000);
}
