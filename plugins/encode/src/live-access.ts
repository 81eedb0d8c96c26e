import type { IncomingMessage } from 'node:http';
import { deviceToolToken, sameSecret } from 'lookout/lib/auth';
import { isLoopbackHost, isLoopbackHostHeader } from 'lookout/lib/net';
import { LookoutError } from 'lookout/core';

export interface LiveRefusal {
  status: 401 | 403;
  error: LookoutError;
  headers?: Record<string, string>;
}

/**
 * The device's tool token, found the way lookout-edge finds it: LOOKOUT_TOOL_TOKEN as given, else
 * derived from LOOKOUT_FLEET_SECRET and the device id (as the hub derives it to call this device).
 */
export function liveToken(
  config: { LOOKOUT_TOOL_TOKEN?: string | undefined; LOOKOUT_FLEET_SECRET?: string | undefined },
  deviceId: string,
): string | undefined {
  if (config.LOOKOUT_TOOL_TOKEN) return config.LOOKOUT_TOOL_TOKEN;
  if (config.LOOKOUT_FLEET_SECRET) return deviceToolToken(config.LOOKOUT_FLEET_SECRET, deviceId);
  return undefined;
}

/**
 * Who may watch, decided from the headers alone, by the tool server's rule:
 * - a loopback-only server answers only to loopback `Host` names (no DNS rebinding);
 * - a request with an `Origin` comes from a browser page on some site: refused;
 * - with a token, a request presenting `Authorization` must present the token (constant-time
 *   compare), and one without it must come from a loopback peer to a loopback name.
 * A server beyond loopback always has a token: the plugin does not listen beyond loopback without one.
 */
export function liveAccessGuard(options: { host: string; token: string | undefined }): (req: IncomingMessage) => LiveRefusal | undefined {
  const loopbackOnly = isLoopbackHost(options.host);
  const token = options.token;
  return (req) => {
    const hostHeader = req.headers.host;
    if (loopbackOnly && !isLoopbackHostHeader(hostHeader)) {
      return { status: 403, error: new LookoutError('forbidden', 'this live stream answers only to loopback host names') };
    }
    if (req.headers.origin !== undefined) {
      return { status: 403, error: new LookoutError('forbidden', 'the live stream is not served to browser pages of other origins') };
    }
    const fromLoopback = isLoopbackHost(req.socket.remoteAddress ?? '') && isLoopbackHostHeader(hostHeader);
    const authorization = req.headers.authorization;
    if (token === undefined) return fromLoopback ? undefined : unauthorized('this live stream serves only loopback callers: the device has no tool token');
    if (authorization === undefined) {
      return fromLoopback ? undefined : unauthorized('the live stream needs Authorization: Bearer <device tool token> from callers beyond loopback');
    }
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    // Hashed before the comparison: neither the length nor the first differing byte shows in the time taken.
    const ok = sameSecret(match?.[1] ?? '', token);
    return ok && match ? undefined : unauthorized('the bearer token is not the tool token of this device');
  };
}

function unauthorized(message: string): LiveRefusal {
  return { status: 401, error: new LookoutError('unauthorized', message), headers: { 'www-authenticate': 'Bearer realm="lookout-device-live"' } };
}
