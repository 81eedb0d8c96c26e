import { chatCompletion, type ChatEndpoint } from 'lookout/lib/net';

/** The describer's API (VIDEO_DESCRIBER_URL…), and the signal of the call it serves. */
export interface DescriberOptions extends ChatEndpoint {
  signal?: AbortSignal;
}

export const MAX_ANSWER_BYTES = 256 * 1024;

/** Bearer tokens anywhere in a text (an answer or an error that echoes the request's headers). */
export function redactSecrets(text: string): string {
  return text.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]');
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

function ask(o: DescriberOptions, countsText: string, jpeg: Buffer): Promise<string> {
  const request = {
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
  return chatCompletion(o, request, MAX_ANSWER_BYTES, o.signal).then((content) => content.trim().slice(0, 2000));
}
