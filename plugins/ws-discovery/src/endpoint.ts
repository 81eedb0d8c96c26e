import { randomUUID } from 'node:crypto';

/** A fresh MessageID for every message sent. */
export function messageId(): string {
  return `urn:uuid:${randomUUID()}`;
}
