import assert from 'node:assert/strict';
import type { z } from 'zod';

/** The value parses, and parsing keeps unknown fields (forward compatibility). */
export function assertAccepts(schema: z.ZodType, value: unknown): void {
  const result = schema.safeParse(value);
  assert.ok(result.success, `expected valid, got: ${result.success ? '' : JSON.stringify(result.error.issues)}`);
}

/** The value is refused, and for the expected reason: an issue at `path` (dot-joined). */
export function assertRejects(schema: z.ZodType, value: unknown, path: string): void {
  const result = schema.safeParse(value);
  assert.equal(result.success, false, `expected invalid at ${path}: ${JSON.stringify(value)}`);
  if (result.success) return;
  const paths = result.error.issues.map((i) => i.path.map(String).join('.'));
  assert.ok(paths.includes(path), `expected an issue at "${path}", got ${JSON.stringify(paths)}`);
}
