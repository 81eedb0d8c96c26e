import { isDeepStrictEqual } from 'node:util';

/** One place where an answer differs from its expectation. */
export interface Mismatch {
  /** `$.plugins[0].state`. */
  path: string;
  expected: unknown;
  /** `undefined` when the answer has nothing there. */
  actual: unknown;
}

/**
 * Whether an answer holds what a case expects: objects match on the keys the expectation names (the
 * answer may carry more), arrays element by element with the same length, everything else exactly.
 * A string expectation `/…/` is a regular expression the value (as text) must match.
 */
export function mismatches(expected: unknown, actual: unknown, path = '$'): Mismatch[] {
  if (typeof expected === 'string' && /^\/.+\/[a-z]*$/.test(expected)) {
    const [, body, flags] = /^\/(.+)\/([a-z]*)$/.exec(expected)!;
    return actual !== undefined && new RegExp(body, flags).test(typeof actual === 'string' ? actual : JSON.stringify(actual))
      ? []
      : [{ path, expected, actual }];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return [{ path, expected, actual }];
    return expected.flatMap((e, i) => mismatches(e, actual[i], `${path}[${i}]`));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [{ path, expected, actual }];
    return Object.entries(expected).flatMap(([k, e]) => mismatches(e, (actual as Record<string, unknown>)[k], `${path}.${k}`));
  }
  return isDeepStrictEqual(expected, actual) ? [] : [{ path, expected, actual }];
}

/** The diff of a failing case, as a reader wants it: each path with what was expected and what came. */
export function formatMismatches(list: Mismatch[]): string {
  return list
    .map((m) => `  ${m.path}\n    - expected ${JSON.stringify(m.expected)}\n    + actual   ${m.actual === undefined ? '(absent)' : JSON.stringify(m.actual)}`)
    .join('\n');
}
