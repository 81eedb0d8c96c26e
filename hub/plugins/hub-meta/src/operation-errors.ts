import { ANY_ROUTE_ERRORS, BODY_ROUTE_ERRORS, routeErrorCode, type ErrorTableEntry, type RouteDecl } from 'lookout/core';

/** A signed URL that does not hold (core/src/auth/signed-url.ts): expired (401) or not this request's (403). */
const SIGNED_URL_ERRORS = ['signed_url_expired', 'signed_url_invalid'];

/**
 * The error codes an operation may answer, by status: those every route may (the composition's:
 * Host, Origin, query and body checks, a failed service, a bug), the token's where it applies, a
 * body's where the route reads one, a signed URL's, then the route's own declared codes. Statuses
 * ascending, codes in the table's order.
 */
export function operationErrors(plugin: string, decl: RouteDecl, table: Map<string, ErrorTableEntry>, tokenRequired: boolean): Map<number, ErrorTableEntry[]> {
  const codes = new Set<string>(ANY_ROUTE_ERRORS);
  if (tokenRequired && !decl.public) codes.add('unauthorized');
  if (decl.body !== undefined || decl.rawBody) for (const c of BODY_ROUTE_ERRORS) codes.add(c);
  if (decl.signedUrl) for (const c of SIGNED_URL_ERRORS) codes.add(c);
  for (const c of decl.errors ?? []) {
    const code = routeErrorCode(plugin, c);
    if (code) codes.add(code);
  }
  const byStatus = new Map<number, ErrorTableEntry[]>();
  for (const entry of table.values()) {
    if (!codes.has(entry.code)) continue;
    byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), entry]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

/** The operation's description: the route's own, or its summary, then who serves it and how it is authorized. */
export function operationDescription(plugin: string, decl: RouteDecl, info: { tokenRequired: boolean }): string {
  const access = decl.public
    ? 'Public: no bearer token (it authenticates each request itself, or shows nothing that needs one).'
    : info.tokenRequired
      ? `Needs the hub's bearer token${decl.signedUrl ? ', or a signed URL (exp and sig)' : ''}.`
      : 'The hub runs without a token: open to loopback and the configured host names.';
  return `${decl.description ?? decl.summary}\n\nServed by the \`${plugin}\` hub plugin. ${access} The errors it may answer are listed per status, each with its code.`;
}
