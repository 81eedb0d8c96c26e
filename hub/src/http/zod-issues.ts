import type { z } from 'zod';
import { LookoutError } from 'lookout/core';

export type RequestPart = 'query' | 'body' | 'params';

/** `body.arguments.x`, `query.limit`: the field a client has to fix, as it would write it. */
export function fieldName(part: RequestPart, path: readonly PropertyKey[]): string {
  return [part, ...path.map((p) => String(p))].join('.');
}

/**
 * A request part that fails its schema, as the 400 of DESIGN.md: the message names the first
 * field at fault, details list every issue with its field.
 */
export function requestInvalid(part: RequestPart, error: z.ZodError): LookoutError {
  const issues = error.issues.map((issue) => {
    // An unknown key is reported on its parent; name the key itself so the client sees it.
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : undefined;
    const path = keys?.length ? [...issue.path, keys[0]] : issue.path;
    // A query parameter is one field as the client wrote it (`kind=a,b`): a list's bad value is named by its position.
    if (part === 'query' && path.length > 1 && typeof path[1] === 'number') {
      return { field: fieldName(part, path.slice(0, 1)), code: issue.code, message: `value ${path[1] + 1} of the list: ${issue.message}` };
    }
    return { field: fieldName(part, path), code: issue.code, message: issue.message };
  });
  const first = issues[0];
  return new LookoutError('bad_request', `${first.field}: ${first.message}`, { details: { field: first.field, issues } });
}
