import { z, canonicalA2aString, canonicalQuery, signA2a, A2A_WINDOW_S, type A2aHeaders } from 'lookout/core';
import { unsignable } from './signable-text.js';

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
      .describe('the path as it will be sent, without the query, e.g. /a2a/query'),
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
    const bad = unsignable(input);
    if (bad) ctx.addIssue({ code: 'custom', path: bad.path, message: bad.message });
  });
export type SignInput = z.output<typeof SignBody>;

export const SignResponse = z.object({
  headers: z
    .object({ 'X-Lookout-Timestamp': z.string(), 'X-Lookout-Nonce': z.string(), 'X-Lookout-Signature': z.string() })
    .describe('send these three headers with the request, unchanged'),
  canonical: z.string().describe('the canonical string that was signed (README, "Signed peer queries"), to compare with your own'),
  query_string: z.string().describe('the canonical query: send it as the query (after ?) and it is what was signed'),
  body: z.string().describe('the exact body bytes that were signed (UTF-8): send these, byte for byte'),
  expires_at: z.string().describe('the signature is refused as stale after this time (ISO 8601); its nonce is good once'),
});
export type SignOutput = z.output<typeof SignResponse>;

/** What POST /a2a/sign answers: the signature headers for the request described, and what was signed. */
export function signDescribedRequest(key: string | Buffer, input: SignInput, nowMs = Date.now()): SignOutput {
  const body = input.body === undefined ? '' : typeof input.body === 'string' ? input.body : JSON.stringify(input.body);
  const request = { method: input.method, path: input.path, query: input.query ?? {}, body };
  const headers: A2aHeaders = signA2a(key, request, nowMs);
  return {
    headers,
    canonical: canonicalA2aString(request, headers['X-Lookout-Timestamp'], headers['X-Lookout-Nonce']),
    query_string: canonicalQuery(request.query),
    body,
    expires_at: new Date((Number(headers['X-Lookout-Timestamp']) + A2A_WINDOW_S) * 1000).toISOString(),
  };
}
