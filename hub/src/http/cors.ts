import type { Context } from 'koa';

const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Request-Id';
const ALLOWED_METHODS = 'GET, POST, PUT, DELETE, OPTIONS';

/**
 * CORS for the configured origins only. Returns true when the request was a preflight and has been
 * answered (preflights carry no token, so they are answered before access control).
 */
export function applyCors(ctx: Context, origins: readonly string[]): boolean {
  const origin = ctx.get('Origin');
  const allowed = origin !== '' && (origins.includes(origin) || origins.includes('*'));
  if (origins.length > 0) ctx.vary('Origin');
  if (allowed) {
    ctx.set('Access-Control-Allow-Origin', origins.includes('*') ? '*' : origin);
    ctx.set('Access-Control-Expose-Headers', 'X-Request-Id');
  }
  if (ctx.method !== 'OPTIONS' || !ctx.get('Access-Control-Request-Method')) return false;
  if (allowed) {
    ctx.set('Access-Control-Allow-Methods', ALLOWED_METHODS);
    ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    ctx.set('Access-Control-Max-Age', '600');
  }
  ctx.status = 204;
  return true;
}
