import type { Context } from 'koa';
import { z } from 'zod';
import { type RouteEntry, type RouteRequest, isRouteReply } from 'lookout/core';
import { parseJsonBody, readBodyBytes, readJsonBody } from './read-json-body.js';
import { requestInvalid } from './zod-issues.js';

const NO_QUERY = z.object({});

/**
 * Runs one declared route: its declared query parameters and its body are checked against the
 * manifest's schemas (a bad value is a 400 naming the field), the handler's result becomes JSON or
 * a RouteReply. Parameters the route does not declare are ignored, as HTTP servers do: a browser's
 * `_=<time>` cache buster or a tracking parameter must not turn a GET into a 400.
 */
export function routeDispatcher(entry: RouteEntry, bodyLimitBytes: number) {
  const { decl } = entry;
  const query = decl.query ?? NO_QUERY;
  const declared = Object.keys(query.shape);
  const handler = entry.handler!;
  return async (ctx: Context & { params?: Record<string, string> }): Promise<void> => {
    ctx.state.route = decl.path;
    const q = query.safeParse(declaredOnly(ctx.query, declared));
    if (!q.success) throw requestInvalid('query', q.error);
    let body: unknown;
    let bodyBytes: Pick<RouteRequest, 'rawBody' | 'parseBody' | 'rawQuery'> = {};
    if (decl.rawBody) {
      const bytes = await readBodyBytes(ctx.req, bodyLimitBytes);
      const type = ctx.req.headers['content-type'];
      bodyBytes = { rawQuery: { ...ctx.query }, rawBody: bytes, parseBody: () => checkBody(decl.body, parseJsonBody(bytes, type)) };
    } else if (decl.body) {
      body = checkBody(decl.body, await readJsonBody(ctx.req, bodyLimitBytes));
    }
    const aborter = new AbortController();
    // The client went away before the answer: let the handler stop its work (e.g. a tool call).
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) aborter.abort(new Error('client closed the request'));
    });
    const request: RouteRequest = { query: q.data, body, params: { ...(ctx.params ?? {}) }, headers: ctx.headers, signal: aborter.signal, ...bodyBytes };
    const result = await handler(request);
    if (isRouteReply(result)) {
      ctx.status = result.status ?? 200;
      for (const [k, v] of Object.entries(result.headers ?? {})) ctx.set(k, v);
      const raw = result.body;
      if (raw === undefined || raw === null) ctx.body = null;
      else if (typeof raw === 'string' || Buffer.isBuffer(raw) || raw instanceof Uint8Array || isStream(raw)) ctx.body = raw;
      else {
        // Serialised here, inside the error handling, rather than by Koa after it.
        ctx.body = JSON.stringify(raw);
        ctx.type = 'application/json';
      }
      if (result.type) ctx.type = result.type;
      return;
    }
    if (result === undefined) {
      ctx.status = 204;
      return;
    }
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(result);
  };
}

function checkBody(schema: z.ZodType | undefined, value: unknown): unknown {
  if (!schema) return value;
  const b = schema.safeParse(value);
  if (!b.success) throw requestInvalid('body', b.error);
  return b.data;
}

/** The declared parameters of a parsed query string (a repeated one stays an array, which its schema refuses). */
function declaredOnly(query: Record<string, unknown>, declared: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of declared) if (Object.hasOwn(query, name)) out[name] = query[name];
  return out;
}

function isStream(value: unknown): boolean {
  return typeof (value as { pipe?: unknown }).pipe === 'function';
}
