import type { ErrorCode } from './codes.js';
import { errorInfo, type AnyErrorCode } from './error-table.js';

/**
 * What a hub route may answer whatever its handler, added to every operation by the hub's
 * composition (hub/src/http): the table's codes for a request refused before its route runs (Host
 * or Origin refused, a query or body that does not parse) and for a failure inside it (a service
 * whose plugin is down, a bug). `unauthorized` is added where the token applies, the body codes
 * where the route reads a body.
 */
export const ANY_ROUTE_ERRORS: readonly ErrorCode[] = ['bad_request', 'forbidden', 'internal', 'service_unavailable'];
/** What reading a JSON body may answer (hub/src/http/read-json-body.ts). */
export const BODY_ROUTE_ERRORS: readonly ErrorCode[] = ['payload_too_large', 'unsupported_media_type'];

/**
 * What a hub route answers when it resolves a target and calls its tool server (the tools-proxy
 * plugin's DEVICE_TOOLS and the registry's resolve): declared by each route that does, so that its
 * OpenAPI operation lists them.
 */
export const DEVICE_CALL_ERRORS: readonly ErrorCode[] = [
  'target_unknown',
  'target_not_allowed',
  'device_unreachable',
  'device_timeout',
  'device_busy',
  'device_auth_refused',
  'device_tls_mismatch',
  'tool_not_found',
];

/**
 * A code a route of `plugin` declares, as the table knows it: a core code, the plugin's own by its
 * short name (`not_built` of `console`), or any plugin's in full (`a2a.peer_unreachable`).
 * Undefined when the table has no such code.
 */
export function routeErrorCode(plugin: string, code: string): AnyErrorCode | undefined {
  if (!code.includes('.') && errorInfo(`${plugin}.${code}`)) return `${plugin}.${code}`;
  return errorInfo(code)?.code;
}
