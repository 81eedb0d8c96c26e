import type { RouteReply } from '../plugin/context.js';

/**
 * A handler's result is JSON unless it is a reply made here: a plain object with a `body` key must
 * stay plain JSON, so a reply is recognised by a registered symbol, which third-party hub plugins
 * can set too (`Symbol.for('lookout.route-reply')`).
 */
export const ROUTE_REPLY = Symbol.for('lookout.route-reply');

/** A RouteReply marked with ROUTE_REPLY, so the hub tells it apart from a plain JSON answer. */
export type TaggedRouteReply = RouteReply & { [ROUTE_REPLY]: true };

/** Wraps a full reply (status, content type, headers) for a route handler to return. */
export function reply(r: RouteReply): TaggedRouteReply {
  return { ...r, [ROUTE_REPLY]: true };
}

/** True when a handler's answer is a full reply made by `reply` (or carrying the shared symbol). */
export function isRouteReply(value: unknown): value is TaggedRouteReply {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[ROUTE_REPLY] === true;
}
