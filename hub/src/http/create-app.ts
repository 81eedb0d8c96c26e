import Koa from 'koa';
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { LookoutError, type RouteEntry, type Logger } from 'lookout/core';
import type { HubMetrics } from '../hub-metrics.js';
import { bearerChecker } from './bearer-auth.js';
import { signedUrlChecker } from './signed-url-auth.js';
import { applyCors } from './cors.js';
import { checkOrigin, hostChecker } from './host-check.js';
import { routeDispatcher } from './dispatch-route.js';
import { requestId } from './request-id.js';
import { writeError } from './write-error.js';

export interface HubAppOptions {
  routes: RouteEntry[];
  metrics: HubMetrics;
  logger: Logger;
  /** When set, every route but the public ones needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Key of signed URLs (derived from the fleet secret): routes declaring `signedUrl` accept them for GET/HEAD. */
  urlKey?: string;
  corsOrigins?: readonly string[];
  /** Host names the hub answers to besides loopback ones (checked always without a token, else only when given). */
  hostNames?: readonly string[];
  bodyLimitBytes: number;
  /** The hub listens on loopback only: routes declaring `localOrigins` take loopback browser origins. */
  loopback?: boolean;
}

/**
 * The hub's Koa app. It only composes: request id, timing and the error body around everything,
 * then the Host check, CORS, the Origin check, access control and the routes the hub plugins
 * declared; nothing is routed that no manifest declares.
 */
export function createHubApp(options: HubAppOptions): Koa {
  const { metrics, logger } = options;
  const log = logger.child({ component: 'http' });
  const app = new Koa();
  app.proxy = false;
  // Errors are answered by the outer middleware; Koa's own handler would only log them again.
  app.silent = true;
  const router = new Router();
  const publicRoutes = new Set<string>();
  const signedRoutes = new Set<string>();
  const localOriginRoutes = new Set<string>();
  for (const entry of options.routes) {
    const { method, path } = entry.decl;
    if (entry.decl.public) publicRoutes.add(`${method} ${path}`);
    if (entry.decl.signedUrl && method === 'GET') signedRoutes.add(`${method} ${path}`);
    if (entry.decl.localOrigins && options.loopback) localOriginRoutes.add(`${method} ${path}`);
    router.register(path, [method], routeDispatcher(entry, options.bodyLimitBytes));
  }
  const authorized = options.token ? bearerChecker(options.token) : () => true;
  const signedUrl = signedUrlChecker(options.urlKey);
  const corsOrigins = options.corsOrigins ?? [];
  const checkHost = hostChecker(options.token, options.hostNames ?? []);

  app.use(async (ctx: Context, next) => {
    const started = process.hrtime.bigint();
    const id = requestId(ctx.headers['x-request-id']);
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    try {
      await next();
      if (ctx.state.route === undefined && !ctx.state.answered) throw unmatched(router, ctx);
    } catch (err) {
      writeError(ctx, err, log);
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpRequest(ctx.method, (ctx.state.route as string | undefined) ?? 'unmatched', ctx.status, seconds);
    }
  });

  app.use(async (ctx, next) => {
    checkHost?.(ctx);
    if (applyCors(ctx, corsOrigins)) {
      ctx.state.answered = true;
      return;
    }
    // The request's routes are matched once here, not once per list (each match tests every route).
    let matched: string[] | undefined;
    const isListed = (routes: Set<string>): boolean => routes.size > 0 && (matched ??= matchedRoutes(router, ctx)).some((r) => routes.has(r));
    checkOrigin(ctx, corsOrigins, isListed(localOriginRoutes));
    // A signed URL (a player without headers) is judged by its signature alone: valid, or refused.
    if (isListed(signedRoutes) && signedUrl(ctx)) {
      await next();
      return;
    }
    if (!isListed(publicRoutes) && !authorized(ctx.get('Authorization') || undefined)) {
      throw new LookoutError('unauthorized', 'this route needs Authorization: Bearer <token>');
    }
    await next();
  });

  app.use(router.routes());
  return app;
}

/** The declared routes the request matches, as `<method> <path>` (HEAD as its GET). */
function matchedRoutes(router: Router, ctx: Context): string[] {
  const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
  return router.match(ctx.path, ctx.method).pathAndMethod.map((layer) => `${method} ${String(layer.path)}`);
}

function unmatched(router: Router, ctx: Context): LookoutError {
  const match = router.match(ctx.path, ctx.method);
  if (match.path.length > 0) {
    const allowed = [...new Set(match.path.flatMap((l) => l.methods))].join(', ');
    ctx.set('Allow', allowed);
    return new LookoutError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path} (allowed: ${allowed})`, { details: { allowed } });
  }
  return new LookoutError('not_found', `no route ${ctx.method} ${ctx.path}`, { details: { method: ctx.method, path: ctx.path } });
}
