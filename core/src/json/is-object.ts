/**
 * True for a JSON object (a plain record), false for null, arrays and every primitive: the check
 * before reading fields of a parsed payload (`JSON.parse`, a tool's result, a bus message) whose
 * shape is not yet known. `typeof x === 'object'` alone lets null and arrays through.
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
