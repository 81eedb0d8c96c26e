import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';

/**
 * Runs a tool call, and when the client sent a progress token (`_meta.progressToken`) tells it every
 * `intervalMs` that the call is still running (MCP progress: `progress` grows with each one), so a
 * long device call (a clip, a model) neither looks hung nor hits the client's idle timeout. Without
 * a token nothing is sent.
 */
export async function withProgress<T>(
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  intervalMs: number,
  what: string,
  run: () => Promise<T>,
): Promise<T> {
  const token = extra._meta?.progressToken;
  if (token === undefined) return run();
  const started = Date.now();
  let sent = 0;
  const tick = (): void => {
    sent += 1;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: sent, message: `${what}: running for ${seconds} s` } })
      .catch(() => undefined);
  };
  const timer = setInterval(tick, intervalMs);
  try {
    return await run();
  } finally {
    clearInterval(timer);
  }
}
