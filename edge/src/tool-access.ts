import type { IncomingMessage } from 'node:http';
import { sameSecret } from 'lookout/lib/auth';
import { LookoutError } from 'lookout/core';
import { isLoopbackHost, isLoopbackHostHeader, isLoopbackOrigin } from 'lookout/lib/net';

export interface ToolAccessOptions {
  /** The address the tool server listens on. */
  host: string;
  /** Bearer token of callers beyond loopback; a server beyond loopback has one (the caller checks). */
  token?: string;
  /** Browser origins (`scheme://host[:port]`) allowed to call; none by default. */
  allowedOrigins?: readonly string[];
}

export interface Refusal {
  status: 401 | 403;
  error: LookoutError;
  headers?: Record<string, string>;
}

/**
 * Who may reach the tools, decided from the headers before the body is read or a tool runs:
 * - a loopback-only server answers only to loopback `Host` names (no DNS rebinding), and to a
 *   request carrying an `Origin` (a browser page) only when that origin is a loopback one
 *   (localhost, 127.0.0.1, [::1], any port and scheme) or an allowed one: MCP 2025-11-25 asks a
 *   local server to accept local origins and refuse the rest;
 * - beyond loopback the hub's HTTP rules hold: the credential first (a request presenting
 *   `Authorization` must present the token, compared in constant time; one without it must come
 *   from a loopback peer to a loopback name, so local agents work as before; every other caller
 *   gets 401), then an `Origin` must be one of the allowed origins (403 otherwise).
 */
export function toolAccessGuard(options: ToolAccessOptions): (req: IncomingMessage) => Refusal | undefined {
  const loopbackOnly = isLoopbackHost(options.host);
  const origins = new Set((options.allowedOrigins ?? []).map(normalizeOrigin));
  const token = options.token;
  const originAllowed = (origin: string): boolean => origins.has(origin.toLowerCase()) || (loopbackOnly && isLoopbackOrigin(origin));
  const credentialRefusal = (req: IncomingMessage): Refusal | undefined => {
    if (token === undefined) return undefined;
    const authorization = req.headers.authorization;
    if (authorization === undefined) {
      if (isLoopbackHost(req.socket.remoteAddress ?? '') && isLoopbackHostHeader(req.headers.host)) return undefined;
      return unauthorized('this tool server needs Authorization: Bearer <device tool token> from callers beyond loopback');
    }
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    // Hashed before the comparison: neither the length nor the first differing byte shows in the time taken.
    const ok = sameSecret(match?.[1] ?? '', token);
    return ok && match ? undefined : unauthorized('the bearer token is not the tool token of this device');
  };
  return (req) => {
    if (loopbackOnly && !isLoopbackHostHeader(req.headers.host)) {
      return { status: 403, error: new LookoutError('forbidden', 'this tool server answers only to loopback host names') };
    }
    // Beyond loopback a stranger learns nothing, not even whether its origin would be welcome.
    if (!loopbackOnly) {
      const refused = credentialRefusal(req);
      if (refused) return refused;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin)) {
      return { status: 403, error: new LookoutError('forbidden', 'requests from this origin are not allowed', { details: { origin: origin.slice(0, 200) } }) };
    }
    return loopbackOnly ? credentialRefusal(req) : undefined;
  };
}

function unauthorized(message: string): Refusal {
  return { status: 401, error: new LookoutError('unauthorized', message), headers: { 'www-authenticate': 'Bearer realm="lookout-device-tools"' } };
}

function normalizeOrigin(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new LookoutError('config_invalid', `allowed origin ${JSON.stringify(origin)} is not an origin (scheme://host[:port])`, { details: { origin } });
  }
  return url.origin.toLowerCase();
}
