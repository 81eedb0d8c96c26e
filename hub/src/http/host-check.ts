import type { Context } from 'koa';
import { LookoutError } from 'lookout/core';
import { hostHeaderName, isLoopbackHostHeader, isLoopbackOrigin } from 'lookout/lib/net';

/**
 * DNS rebinding: a web page whose own name resolves to 127.0.0.1 reaches a hub on loopback, and the
 * browser sends that page's name in `Host`. So a hub without a token answers only to loopback names
 * and to the names it was given (`--host-name`), as the device's tool server does; with a token the
 * token guards it, and the names are checked only when some were given. Undefined: no check.
 */
export function hostChecker(token: string | undefined, hostNames: readonly string[]): ((ctx: Context) => void) | undefined {
  if (token !== undefined && hostNames.length === 0) return undefined;
  const names = new Set(hostNames.map((n) => n.toLowerCase().replace(/^\[|\]$/g, '')));
  return (ctx) => {
    const header = ctx.get('Host') || undefined;
    const name = hostHeaderName(header);
    if (isLoopbackHostHeader(header) || (name !== undefined && names.has(name))) return;
    throw new LookoutError('forbidden', `this hub does not answer to the host name ${JSON.stringify(name ?? '')}; add it with --host-name`, {
      details: { host: name ?? null },
    });
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A browser sends `Origin` with every cross-site POST, and CORS only stops the page reading the
 * answer, not the request running. A state-changing request from an origin that neither the CORS
 * configuration allows nor is the hub's own is refused before its route runs. `localOrigins`: the
 * hub listens on loopback and the route declares `localOrigins` (POST /mcp): a loopback page may call.
 */
export function checkOrigin(ctx: Context, corsOrigins: readonly string[], localOrigins = false): void {
  const origin = ctx.get('Origin');
  if (!origin || SAFE_METHODS.has(ctx.method)) return;
  if (corsOrigins.includes('*') || corsOrigins.includes(origin)) return;
  if (localOrigins && isLoopbackOrigin(origin)) return;
  const host = ctx.get('Host');
  if (host && (origin === `http://${host}` || origin === `https://${host}`)) return;
  throw new LookoutError('forbidden', `requests from the origin ${JSON.stringify(origin.slice(0, 200))} are not allowed (--cors-origin)`, {
    details: { origin: origin.slice(0, 200) },
  });
}
