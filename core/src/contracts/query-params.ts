import { z } from 'zod';

/**
 * Query parameters of the hub's routes arrive as text. These schemas parse exactly the form their
 * output type declares: `limit=0x10`, `1e3`, `+5`, ` 5` or `5.0` are refused, where z.coerce would
 * take them through Number() and answer as if the client had written a plain integer. OpenAPI shows
 * the output side (the integer, the array of values), which is what a parameter's schema describes.
 */

/** A decimal integer in [min, max], written without sign (unless negative), leading zeros or exponent. */
export function queryInteger(min: number, max: number) {
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min > max) throw new RangeError(`bad integer range [${min}, ${max}]`);
  const pattern = min < 0 ? /^(?:0|-?[1-9]\d{0,15})$/ : /^(?:0|[1-9]\d{0,15})$/;
  return z.string().regex(pattern, `must be a decimal integer from ${min} to ${max}`).transform(Number).pipe(z.number().int().min(min).max(max));
}

/** A comma-separated list of values (`kind=a,b`), each checked by `item`; OpenAPI: style form, explode false. */
export function queryList<T extends z.ZodType<unknown, string>>(item: T) {
  return z
    .string()
    .transform((s) => s.split(','))
    .pipe(z.array(item).min(1));
}
