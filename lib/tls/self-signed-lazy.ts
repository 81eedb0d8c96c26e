import type { SelfSignedCertificate, SelfSignedRequest } from './self-signed.js';

export type { SelfSignedCertificate };

/**
 * A self-signed device certificate (self-signed.ts), with @peculiar/x509 imported on the first call
 * only: what `lookout/core` can export without every process loading the library at start.
 */
export async function createSelfSignedCertificate(options: SelfSignedRequest): Promise<SelfSignedCertificate> {
  const { selfSignedCertificate } = await import('./self-signed.js');
  return selfSignedCertificate(options);
}
