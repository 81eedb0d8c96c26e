import { chatCompletion, type ChatEndpoint } from 'lookout/lib/net';

/** An OpenAI-compatible chat completions endpoint (SAFETY_DESCRIBER_URL), the same shape the recorder's video_understand describer calls. */
export type DescriberOptions = ChatEndpoint;

const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Asks the describer to phrase an answer to `question` from the device's figures (a JSON text). Its
 * text is checked against the counts by the caller; this only returns it or throws why there is
 * none. Neither the key nor the answer's body goes into an error.
 */
export async function phrase(o: DescriberOptions, question: string, figures: string, signal?: AbortSignal): Promise<string> {
  const request = {
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
  const content = await chatCompletion(o, request, MAX_ANSWER_BYTES, signal);
  return content
    .trim()
    .replace(/Bearer\s+\S+/gi, 'Bearer [redacted]')
    .slice(0, 2000);
}
