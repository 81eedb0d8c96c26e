import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Checks `Authorization: Bearer <token>` in constant time: both sides are hashed first, so the
 * comparison takes as long whatever the length or the first differing byte of the candidate.
 */
export function bearerChecker(token: string): (header: string | undefined) => boolean {
  const expected = createHash('sha256').update(token, 'utf8').digest();
  return (header) => {
    const match = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
    const given = createHash('sha256')
      .update(match?.[1] ?? '', 'utf8')
      .digest();
    return timingSafeEqual(expected, given) && match !== null;
  };
}
