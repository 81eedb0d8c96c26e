import { SIGNED_URL_MAX_TTL_S } from 'lookout/lib/auth';

/** The OpenAPI security scheme of signed URLs (core/src/auth/signed-url.ts): `sig` in the query, with `exp`. */
export const SIGNED_URL_SCHEME = {
  type: 'apiKey',
  in: 'query',
  name: 'sig',
  description:
    `A signed, expiring URL (exp and sig, HMAC-SHA256 under a key derived from the fleet secret) for players that cannot send a header; ` +
    `GET/HEAD of that one resource only, until exp (at most ${SIGNED_URL_MAX_TTL_S} s). Routes that give one: POST /media/clips/sign.`,
} as const;

/**
 * A route that declares `signedUrl`: its `exp` and `sig` parameters and the signature as an alternative
 * to the bearer token (the two refusals of a signature that does not hold are operation-errors.ts's).
 */
export function documentSignedUrl(op: Record<string, unknown>, tokenRequired: boolean): void {
  (op.parameters as unknown[]).push(
    { name: 'exp', in: 'query', required: false, description: 'signed URL: its expiry, Unix seconds', schema: { type: 'integer', minimum: 0 } },
    {
      name: 'sig',
      in: 'query',
      required: false,
      description: 'signed URL: HMAC-SHA256, 64 lower-case hex digits',
      schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    },
  );
  if (tokenRequired) op.security = [{ bearer: [] }, { signedUrl: [] }];
}
