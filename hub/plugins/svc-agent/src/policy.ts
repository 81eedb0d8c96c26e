import { timingSafeEqual, createHash } from 'node:crypto';

/** Whether the caller may run mutating steps: it sent the configured approval token (compared in constant time). */
export function callerMayMutate(configured: string | undefined, sent: string | string[] | undefined): boolean {
  if (configured === undefined || typeof sent !== 'string' || sent.length === 0) return false;
  // Digests of equal length, so neither the comparison nor its length leaks the token.
  const a = createHash('sha256').update(configured).digest();
  const b = createHash('sha256').update(sent).digest();
  return timingSafeEqual(a, b);
}

/** Why a step may not run, or null when it may: read-only tools always; others when approved and the caller may. */
export function refusal(readOnly: boolean, approved: boolean, callerMay: boolean): string | null {
  if (readOnly) return null;
  if (!approved) return 'a mutating tool (no readOnlyHint) runs only in an approved plan';
  if (!callerMay) return 'a mutating tool needs the approval token (x-svc-agent-approval) of LOOKOUT_SVC_AGENT_APPROVAL_TOKEN';
  return null;
}
