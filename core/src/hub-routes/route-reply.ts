import type { RouteReply } from '../plugin/context.js';

/**
 * A handler's result is JSON unless it is a reply made here: a plain object with a `body` key must
 * stay plain JSON, so a reply is recognised by a registered symbol, which third-party hub plugins
 * can set too (`Symbol.for('lookout.route-reply')`).
 */
export const ROUTE_REPLY = Symbol.for('lookout.route-reply');

export type TaggedRouteReply = RouteReply & { [ROUTE_REPLY]: true };

export function reply(r: RouteReply): TaggedRouteReply {
  return { ...r, [ROUTE_REPLY]: true };
}

export function isRouteReply(value: unknown): value is TaggedRouteReply {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[ROUTE_REPLY] === true;
}
