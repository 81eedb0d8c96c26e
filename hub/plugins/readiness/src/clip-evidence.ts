import { setOwn } from 'lookout/core';

/**
 * Evidence and reasons hold what a device answered, and are stored in the hub's shared state and
 * answered to every reader: a device must not be able to make them large (a 4 MB overlay_mount).
 * Each is kept small here, before it is stored or answered; what was cut is marked with `...`.
 */

/** Longest string kept inside a value: a fingerprint, a path or a state is far shorter. */
export const MAX_EVIDENCE_STRING_CHARS = 256;
/** Items kept of an array, keys of an object, levels of nesting. */
const MAX_ITEMS = 16;
const MAX_DEPTH = 6;
/** Longest JSON of a whole value (a mesh summary of 16 peers fits); a longer one is kept as the start of its JSON, a string. */
export const MAX_EVIDENCE_JSON_CHARS = 2048;
/** Longest reason of one module or field (the device's record joins them, and keeps at most 2000 characters). */
export const MAX_EVIDENCE_REASON_CHARS = 1024;

export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  // Not between the two halves of a surrogate pair: a lone half is not well-formed text.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 4)) ? max - 4 : max - 3;
  return `${text.slice(0, end)}...`;
}

export function clipReason(reason: string | null): string | null {
  return reason === null ? null : clipText(reason, MAX_EVIDENCE_REASON_CHARS);
}

/** A value as evidence keeps it: strings, arrays, objects and nesting bounded, then its whole JSON. */
export function clipValue(value: unknown): unknown {
  const bounded = bound(value, 0);
  const json = JSON.stringify(bounded) ?? 'null';
  return json.length <= MAX_EVIDENCE_JSON_CHARS ? bounded : clipText(json, MAX_EVIDENCE_JSON_CHARS);
}

/** A copy with every part bounded; it walks at most MAX_ITEMS (+1) of each level, whatever the value's size. */
function bound(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return clipText(value, MAX_EVIDENCE_STRING_CHARS);
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value !== 'object' || value === null) return null;
  if (depth >= MAX_DEPTH) return `[nested deeper than ${MAX_DEPTH} levels]`;
  if (Array.isArray(value)) {
    if (value.length <= MAX_ITEMS) return value.map((item) => bound(item, depth + 1));
    // The mark takes the last place, so that a value clipped once is unchanged when clipped again.
    return [...value.slice(0, MAX_ITEMS - 1).map((item) => bound(item, depth + 1)), `... ${value.length - MAX_ITEMS + 1} more`];
  }
  const keys: string[] = [];
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    keys.push(key);
    if (keys.length > MAX_ITEMS) break;
  }
  const out: Record<string, unknown> = {};
  const kept = keys.length > MAX_ITEMS ? keys.slice(0, MAX_ITEMS - 1) : keys;
  for (const key of kept) setOwn(out, clipText(key, MAX_EVIDENCE_STRING_CHARS), bound((value as Record<string, unknown>)[key], depth + 1));
  if (kept.length < keys.length) out['...'] = 'more keys left out';
  return out;
}
