import { LookoutError, isRouteReply, type HttpMethod, type RouteReply } from 'lookout/core';
import type { HubRouteCatalog } from 'lookout/hub';

/** What a declared hub route answered: its JSON, or its full reply (a JPEG, a status other than 200). */
export type RouteAnswer = { kind: 'json'; body: unknown } | { kind: 'reply'; reply: RouteReply };

/**
 * Runs a route another hub plugin declared, in process, as the HTTP side would run it: the query is
 * checked against the route's own schema (a bad value is argument_invalid naming the field) and the
 * handler's answer comes back unchanged. The MCP tools are thus the HTTP API's answers, with its
 * limits, and a route added later (the fleet history) becomes a tool by one table entry.
 */
export async function callRoute(
  routes: HubRouteCatalog,
  method: HttpMethod,
  path: string,
  query: Record<string, string>,
  signal: AbortSignal,
): Promise<RouteAnswer> {
  const entry = routes.list().find((e) => e.decl.method === method && e.decl.path === path);
  if (!entry?.handler) {
    throw new LookoutError('service_unavailable', `${method} ${path} is not served by this hub (its plugin is not loaded or failed)`, {
      details: { route: `${method} ${path}` },
    });
  }
  let parsed: unknown = {};
  if (entry.decl.query) {
    const result = entry.decl.query.safeParse(query);
    if (!result.success) {
      const issue = result.error.issues[0];
      const field = issue?.path.join('.') || 'query';
      throw new LookoutError('argument_invalid', `${field}: ${issue?.message ?? 'invalid'}`, { details: { field } });
    }
    parsed = result.data;
  }
  const answer: unknown = await entry.handler({ query: parsed, body: undefined, params: {}, headers: {}, signal });
  if (!isRouteReply(answer)) return { kind: 'json', body: answer };
  // A route that serialises its JSON itself (the latest cache answers pre-rendered text) is still JSON.
  const body = answer.body;
  const json = (answer.type ?? '').includes('json') && (answer.status ?? 200) === 200;
  if (json && (typeof body === 'string' || Buffer.isBuffer(body))) return { kind: 'json', body: JSON.parse(body.toString()) as unknown };
  if (json && typeof body === 'object' && body !== null && !(body instanceof Uint8Array)) return { kind: 'json', body };
  return { kind: 'reply', reply: answer };
}
