import { z } from 'lookout/core';
import { canonicalA2aString, canonicalQuery, signA2a, A2A_WINDOW_S, type A2aHeaders } from 'lookout/lib/auth';
import { unsignable } from './signable-text.js';

/**
 * The routes that take a signature, by method and path. /a2a/sign signs requests to these only: a
 * signature is no credential anywhere else today, and must not become one for a route that later
 * accepts signatures (a bearer holder's signature for /tools/call would be one).
 */
export const SIGNED_ROUTES: readonly { method: string; path: string }[] = [{ method: 'POST', path: '/a2a/query' }];

/** The key id /a2a/sign signs as: the bearer holders are one signer, with one nonce bound. */
export const SIGN_ROUTE_SIGNER = 'a2a-sign';

export const SignBody = z
  .object({
    method: z
      .string()
      .regex(/^[A-Za-z]{1,16}$/, 'an HTTP method such as POST')
      .describe('HTTP method of the request to sign (upper-cased in the canonical string)'),
    path: z
      .string()
      .max(2048)
      .regex(/^\/[^?#\s]*$/, 'an absolute path without query or fragment, e.g. /a2a/query')
      .describe('the path as it will be sent, without the query: an A2A route, /a2a/query'),
    query: z
      .record(z.string().max(256), z.union([z.string().max(2048), z.array(z.string().max(2048)).max(32)]))
      .refine((q) => Object.keys(q).length <= 32, 'at most 32 parameters')
      .optional()
      .describe('the query parameters, decoded (a repeated one as an array), e.g. {"q": "peer_hello", "target": "cam-1"}'),
    body: z
      .unknown()
      .optional()
      .describe('the body to send: a string is signed as its UTF-8 bytes, any other JSON value as JSON.stringify of it; none is an empty body'),
  })
  .strict()
  // A lone surrogate anywhere (JSON can carry one as \ud800) has no UTF-8 form: refused here with
  // the field, a 400, rather than signed as bytes the client cannot send or failing to encode.
  .superRefine((input, ctx) => {
    if (!SIGNED_ROUTES.some((r) => r.path === input.path)) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: `only the A2A routes are signed: ${SIGNED_ROUTES.map((r) => r.path).join(', ')}` });
      return;
    }
    if (!SIGNED_ROUTES.some((r) => r.path === input.path && r.method === input.method.toUpperCase())) {
      ctx.addIssue({
        code: 'custom',
        path: ['method'],
        message: `${input.path} is signed for ${SIGNED_ROUTES.filter((r) => r.path === input.path)
          .map((r) => r.method)
          .join(', ')} only`,
      });
      return;
    }
    const bad = unsignable(input);
    if (bad) ctx.addIssue({ code: 'custom', path: bad.path, message: bad.message });
  });
export type SignInput = z.output<typeof SignBody>;

export const SignResponse = z.object({
  headers: z
    .object({
      'X-Lookout-Timestamp': z.string(),
      'X-Lookout-Nonce': z.string(),
      'X-Lookout-Signature': z.string(),
      'X-Lookout-Key-Id': z.string().optional().describe('the signer (a2a-sign): its own nonce bound'),
    })
    .describe('send these headers with the request, unchanged'),
  canonical: z.string().describe('the canonical string that was signed (docs/a2a.md), to compare with your own'),
  query_string: z.string().describe('the canonical query: send it as the query (after ?) and it is what was signed'),
  body: z.string().describe('the exact body bytes that were signed (UTF-8): send these, byte for byte'),
  expires_at: z.string().describe('the signature is refused as stale after this time (ISO 8601); its nonce is good once'),
});
export type SignOutput = z.output<typeof SignResponse>;

/** What POST /a2a/sign answers: the signature headers for the request described (as `keyId` when given), and what was signed. */
export function signDescribedRequest(key: string | Buffer, input: SignInput, nowMs = Date.now(), keyId?: string): SignOutput {
  const body = input.body === undefined ? '' : typeof input.body === 'string' ? input.body : JSON.stringify(input.body);
  const request = { method: input.method, path: input.path, query: input.query ?? {}, body };
  const headers: A2aHeaders = signA2a(key, request, nowMs, undefined, keyId);
  return {
    headers,
    canonical: canonicalA2aString(request, headers['X-Lookout-Timestamp'], headers['X-Lookout-Nonce']),
    query_string: canonicalQuery(request.query),
    body,
    expires_at: new Date((Number(headers['X-Lookout-Timestamp']) + A2A_WINDOW_S) * 1000).toISOString(),
  };
}
