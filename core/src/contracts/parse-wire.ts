import type { z } from 'zod';
import { LookoutError } from '../errors/lookout-error.js';

/** One reason a message failed its contract: the field's dotted path (`(root)` for the whole value) and zod's message. */
export interface WireIssue {
  path: string;
  message: string;
}

/** The first few issues, as `path: message`, short enough for a log line or a debug-ring entry. */
export function wireIssues(error: z.ZodError, max = 5): WireIssue[] {
  return error.issues.slice(0, max).map((i) => ({
    path: i.path.length === 0 ? '(root)' : i.path.map(String).join('.'),
    message: i.message,
  }));
}

/**
 * Validates a decoded message against its contract; a mismatch is a `message_invalid` error
 * whose message names the contract and the first issues (details hold them as data).
 */
export function parseWire<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = wireIssues(result.error);
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  throw new LookoutError('message_invalid', `${what} does not match its contract: ${summary}`, {
    details: { contract: what, issues },
  });
}

/** As parseWire, from a raw MQTT payload: non-JSON is a `message_invalid` error too. */
export function parseWirePayload<S extends z.ZodType>(schema: S, payload: Buffer | string, what: string): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));
  } catch (err) {
    throw new LookoutError('message_invalid', `${what} is not JSON`, { details: { contract: what }, cause: err });
  }
  return parseWire(schema, value, what);
}
