import type { IncomingMessage } from 'node:http';
import { sameSecret } from 'lookout/lib/auth';
import { LookoutError } from 'lookout/core';
import { isLoopbackHost, isLoopbackHostHeader } from 'lookout/lib/net';

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
 * - a loopback-only server answers only to loopback `Host` names (no DNS rebinding);
 * - a request carrying an `Origin` comes from a browser page: 403 unless the origin is allowed
 *   (MCP 2025-11-25: servers MUST validate Origin; a page on any site could otherwise call tools);
 * - with a token, a request presenting `Authorization` must present the token (compared in constant
 *   time), and one without it must come from a loopback peer to a loopback name: local agents work
 *   as before, every other caller gets 401.
 */
export function toolAccessGuard(options: ToolAccessOptions): (req: IncomingMessage) => Refusal | undefined {
  const loopbackOnly = isLoopbackHost(options.host);
  const origins = new Set((options.allowedOrigins ?? []).map(normalizeOrigin));
  const token = options.token;
  return (req) => {
    const hostHeader = req.headers.host;
    if (loopbackOnly && !isLoopbackHostHeader(hostHeader)) {
      return { status: 403, error: new LookoutError('forbidden', 'this tool server answers only to loopback host names') };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin.toLowerCase())) {
      return { status: 403, error: new LookoutError('forbidden', 'requests from this origin are not allowed', { details: { origin: origin.slice(0, 200) } }) };
    }
    if (token === undefined) return undefined;
    const authorization = req.headers.authorization;
    if (authorization === undefined) {
      if (isLoopbackHost(req.socket.remoteAddress ?? '') && isLoopbackHostHeader(hostHeader)) return undefined;
      return unauthorized('this tool server needs Authorization: Bearer <device tool token> from callers beyond loopback');
    }
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    // Hashed before the comparison: neither the length nor the first differing byte shows in the time taken.
    const ok = sameSecret(match?.[1] ?? '', token);
    return ok && match ? undefined : unauthorized('the bearer token is not the tool token of this device');
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
