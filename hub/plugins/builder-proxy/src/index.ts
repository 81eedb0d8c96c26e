import { Readable } from 'node:stream';
import { definePlugin, LookoutError, reply, z, type RouteRequest } from 'lookout/core';
import { builderUrl } from './builder-request.js';
import { boundedStream } from './bounded-stream.js';

const config = z.object({
  // Empty is unset (a compose file's `LOOKOUT_BUILDER_URL=`): the routes then say how to set it.
  LOOKOUT_BUILDER_URL: z
    .union([z.literal(''), z.url({ protocol: /^https?$/ })])
    .optional()
    .describe('the model builder (lookout-builder), e.g. http://127.0.0.1:8790'),
  LOOKOUT_BUILDER_TOKEN: z.string().min(8).optional().describe("the builder's own bearer token, sent on every request passed through"),
  /** Until the builder's answer headers; its body then streams as long as the client reads. */
  LOOKOUT_HUB_BUILDER_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(30_000),
  LOOKOUT_HUB_BUILDER_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(256 * 1024 * 1024),
});

/** Headers of the builder's answer that reach the client; hop-by-hop ones and cookies do not. */
const PASSED_HEADERS = ['content-type', 'content-length', 'cache-control', 'etag', 'last-modified', 'location', 'retry-after'];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;

/**
 * The spec's Flask-style `/api/*` pass-through: every `/api/...` request, past the hub's own
 * authentication and body bound, goes to the builder with the builder's token; its answer (status,
 * typed error bodies included) streams back.
 */
export default definePlugin({
  name: 'builder-proxy',
  version: '1.0.0',
  core: '^1',
  description: 'Passes /api/* through to the model builder (lookout-builder): ontology, datasets, pipeline jobs',
  config,
  errors: [
    { code: 'builder_not_configured', status: 503, description: 'the hub has no builder to pass /api/* to (--builder-url or LOOKOUT_BUILDER_URL)' },
    { code: 'builder_unreachable', status: 502, description: 'the builder could not be reached' },
    { code: 'builder_timeout', status: 504, description: 'the builder did not answer in time' },
  ],
  routes: METHODS.map((method) => ({
    method,
    path: '/api/*rest',
    summary: `${method} /api/…: passed through to the model builder (its OpenAPI: GET /api/openapi.json)`,
    params: { rest: 'the builder path after /api/' },
    statuses: [201, 202, 204],
    errors: ['builder_not_configured', 'builder_unreachable', 'builder_timeout'],
    // The body is relayed as the bytes received (bounded by the hub's body limit), never reparsed.
    rawBody: true,
  })),
  start(ctx) {
    const c = ctx.config;
    const forward = async (method: string, req: RouteRequest): Promise<unknown> => {
      if (!c.LOOKOUT_BUILDER_URL)
        throw new LookoutError('builder-proxy.builder_not_configured', 'the hub has no builder: start it with --builder-url or LOOKOUT_BUILDER_URL');
      const url = builderUrl(c.LOOKOUT_BUILDER_URL, req.params.rest ?? '', req.rawQuery ?? {});
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), c.LOOKOUT_HUB_BUILDER_TIMEOUT_MS);
      const headers: Record<string, string> = { accept: String(req.headers.accept ?? 'application/json') };
      if (req.headers['content-type']) headers['content-type'] = String(req.headers['content-type']);
      if (req.headers['x-request-id']) headers['x-request-id'] = String(req.headers['x-request-id']);
      if (c.LOOKOUT_BUILDER_TOKEN) headers.authorization = `Bearer ${c.LOOKOUT_BUILDER_TOKEN}`;
      const body = req.rawBody && req.rawBody.length > 0 && method !== 'GET' ? new Uint8Array(req.rawBody) : undefined;
      let res: Response;
      try {
        res = await fetch(url, { method, headers, ...(body ? { body } : {}), redirect: 'manual', signal: AbortSignal.any([timeout.signal, req.signal]) });
      } catch (err) {
        if (timeout.signal.aborted)
          throw new LookoutError('builder-proxy.builder_timeout', `the builder did not answer within ${c.LOOKOUT_HUB_BUILDER_TIMEOUT_MS} ms`, { cause: err });
        throw new LookoutError('builder-proxy.builder_unreachable', `the builder at ${new URL(c.LOOKOUT_BUILDER_URL).origin} could not be reached`, {
          cause: err,
        });
      } finally {
        clearTimeout(timer);
      }
      const passed: Record<string, string> = {};
      for (const h of PASSED_HEADERS) {
        const v = res.headers.get(h);
        if (v !== null && h !== 'content-type') passed[h] = v;
      }
      const type = res.headers.get('content-type') ?? undefined;
      const stream = res.body
        ? Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>).pipe(boundedStream(c.LOOKOUT_HUB_BUILDER_MAX_RESPONSE_BYTES))
        : null;
      return reply({ status: res.status, body: stream, headers: passed, ...(type ? { type } : {}) });
    };
    for (const method of METHODS) ctx.routes.handle(method, '/api/*rest', (req) => forward(method, req));
  },
});
