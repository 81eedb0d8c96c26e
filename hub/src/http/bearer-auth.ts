import { sameSecret } from 'lookout/lib/auth';

/** Checks `Authorization: Bearer <token>` in constant time (sameSecret hashes both sides first). */
export function bearerChecker(token: string): (header: string | undefined) => boolean {
  return (header) => {
    const match = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
    return sameSecret(match?.[1] ?? '', token) && match !== null;
  };
}
