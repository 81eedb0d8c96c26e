/** In a `u` regular expression a surrogate pair is one code point, so this matches only a lone surrogate. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Deepest JSON body /a2a/sign signs: deeper nesting would overflow JSON.stringify's stack, and no request needs it. */
export const MAX_BODY_DEPTH = 64;

export type Unsignable = { path: (string | number)[]; message: string };

/**
 * Why a JSON value described to /a2a/sign cannot be signed as it would be sent, or null: a string
 * (or an object key) that is not well-formed Unicode (a lone surrogate has no UTF-8 form, so the
 * bytes sent cannot be the ones signed, and percent-encoding it throws), or nesting deeper than
 * MAX_BODY_DEPTH. Walked with a stack of its own, so a deep value cannot overflow the call stack.
 */
export function unsignable(value: unknown): Unsignable | null {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return { path, message: 'not well-formed Unicode (a lone surrogate): it has no UTF-8 form to sign' };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (path.length >= MAX_BODY_DEPTH) return { path, message: `nested deeper than ${MAX_BODY_DEPTH} levels` };
    if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ value: item, path: [...path, i] }));
      continue;
    }
    for (const [key, item] of Object.entries(v)) {
      if (LONE_SURROGATE.test(key)) return { path, message: 'has a key that is not well-formed Unicode (a lone surrogate)' };
      stack.push({ value: item, path: [...path, key] });
    }
  }
  return null;
}
