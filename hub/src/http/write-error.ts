import type { Context } from 'koa';
import { LookoutError, toLookoutError, type ErrorCode, redactSecrets, type Logger } from 'lookout/core';

/** Statuses Koa or Node may raise on their own, as codes of the table. */
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/**
 * Any failure as the DESIGN.md body `{ error: { code, message, details? } }` with its code's status.
 * An unexpected failure (code `internal`) is logged in full and answered without its message, which
 * may carry internals; a typed failure's message and details are meant for the client.
 */
export function writeError(ctx: Context, err: unknown, log: Logger): void {
  const e = fromHttpError(err) ?? toLookoutError(err);
  const requestId = ctx.state.requestId as string | undefined;
  if (e.code === 'internal') {
    log.error({ err: e.cause ?? e, requestId, route: ctx.state.route }, 'request failed');
  } else if (e.status >= 500) {
    log.warn({ code: e.code, requestId, route: ctx.state.route, message: e.message }, 'request failed');
  }
  const body = e.code === 'internal' ? new LookoutError('internal', `internal error (request ${requestId ?? 'unknown'})`).toBody() : redactSecrets(e.toBody());
  ctx.status = e.status;
  ctx.type = 'application/json';
  ctx.body = body;
  if (e.code === 'unauthorized') ctx.set('WWW-Authenticate', 'Bearer');
  // The rest of a refused upload is never read: closing the connection stops the client sending it
  // (else Node drains a declared body to its end, or a paused chunked one holds the socket).
  if (e.code === 'payload_too_large') ctx.set('Connection', 'close');
}

function fromHttpError(err: unknown): LookoutError | undefined {
  if (err instanceof LookoutError) return undefined;
  const status = (err as { status?: unknown; expose?: unknown })?.status;
  if (typeof status !== 'number') return undefined;
  const code = STATUS_CODES[status];
  return code ? new LookoutError(code, (err as Error).message, { cause: err }) : undefined;
}
