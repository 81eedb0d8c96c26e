import type { Context } from 'koa';
import { hasUrlSignature, verifySignedUrl } from 'lookout/lib/auth';
import { LookoutError } from 'lookout/core';

/**
 * For routes that declare `signedUrl`: true when the request carries a URL signature that holds
 * (the route then needs no bearer token), false when it carries none (the bearer rule applies);
 * a signature that does not hold is refused here (401 expired, 403 otherwise), never passed on to
 * the bearer check, so a player learns why its link stopped working.
 */
export function signedUrlChecker(key: string | undefined): (ctx: Context) => boolean {
  return (ctx) => {
    const query = ctx.query as Record<string, string | string[] | undefined>;
    if (!hasUrlSignature(query)) return false;
    if (key === undefined) throw new LookoutError('signed_url_invalid', 'this hub has no key for signed URLs');
    const verdict = verifySignedUrl(key, { method: ctx.method, path: ctx.path, query }, Date.now() / 1000);
    if (!verdict.ok) throw new LookoutError(verdict.reason, verdict.message);
    return true;
  };
}
