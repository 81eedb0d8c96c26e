/**
 * JSON writers compiled once from a JSON Schema (z.toJSONSchema of a route's response), so that a
 * hot answer is written by code made from its declared shape, not by a hand-kept twin of it. A
 * writer pushes pieces into an array that the caller joins once; it writes what JSON.stringify
 * would for the same value, the object keys in the schema's order:
 *  - an object the schema closes (`additionalProperties: false`): its declared keys, in order,
 *    each by its own writer (an undefined value is left out, as JSON.stringify does);
 *  - a record (`additionalProperties` a schema, no `properties`): each key, its value by the
 *    value's writer (an object, or RecordEntries);
 *  - anything else (a number, a string, a stored message the schema leaves open, a list): as
 *    JSON.stringify writes it, keys in the value's own order (a device's message is shown as it came).
 * A value already written (`Prewritten`) is pushed as it is, wherever it stands.
 */

/** What the writers read of a JSON Schema. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
}

/** Pieces of JSON text; a `null` is a hole left for a value written later (WriterOptions.holes). */
export type JsonPieces = (string | null)[];

export type JsonWriter = (value: unknown, out: JsonPieces) => void;

/** A value whose JSON its owner writes (a device's entry kept between requests). */
export class Prewritten {
  constructor(readonly write: (out: JsonPieces) => void) {}
}

/** A record's entries given one by one (no object made for the answer), in the order to write them. */
export class RecordEntries {
  constructor(readonly entries: Iterable<readonly [string, unknown]>) {}
}

export interface ObjectWriterOptions {
  /** Keys whose value is not written: a `null` piece stands for it, after its `"key":`. */
  holes?: ReadonlySet<string>;
  /** Keys whose object values are never changed in place: each one's JSON is made once, kept here by identity. */
  once?: { keys: ReadonlySet<string>; json: WeakMap<object, string> };
}

/** The writer of any value of `schema`. */
export function compileJsonWriter(schema: JsonSchema): JsonWriter {
  if (isClosedObject(schema)) return compileObjectWriter(schema);
  const values = schema.additionalProperties;
  if (isObjectType(schema) && !schema.properties && typeof values === 'object') return recordWriter(compileJsonWriter(values));
  return writeWhole;
}

/**
 * The writer of an object of `schema`, its declared keys in order, even where the schema leaves it
 * open to more (a route's own entry, whose extra keys nobody sets): those are not written.
 */
export function compileObjectWriter(schema: JsonSchema, options: ObjectWriterOptions = {}): JsonWriter {
  const fields = Object.entries(schema.properties ?? {}).map(([key, s]) => ({
    key,
    head: `${JSON.stringify(key)}:`,
    write: compileJsonWriter(s),
    hole: options.holes?.has(key) === true,
    once: options.once?.keys.has(key) === true,
  }));
  const kept = options.once?.json;
  return (value, out) => {
    if (value instanceof Prewritten) return value.write(out);
    if (!isPlainObject(value)) return writeWhole(value, out);
    let first = true;
    for (const f of fields) {
      const v = value[f.key];
      if (v === undefined && !f.hole) continue;
      out.push(first ? `{${f.head}` : `,${f.head}`);
      first = false;
      if (f.hole) out.push(null);
      else if (f.once && kept && typeof v === 'object' && v !== null) out.push(jsonOnce(v, kept));
      else f.write(v, out);
    }
    out.push(first ? '{}' : '}');
  };
}

function recordWriter(writeValue: JsonWriter): JsonWriter {
  return (value, out) => {
    if (value instanceof Prewritten) return value.write(out);
    const entries = value instanceof RecordEntries ? value.entries : isPlainObject(value) ? Object.entries(value) : undefined;
    if (!entries) return writeWhole(value, out);
    let first = true;
    for (const [key, v] of entries) {
      if (v === undefined) continue;
      out.push(first ? `{${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
      first = false;
      writeValue(v, out);
    }
    out.push(first ? '{}' : '}');
  };
}

/** As JSON.stringify writes it (null for what it leaves out, as a property's value never is here). */
function writeWhole(value: unknown, out: JsonPieces): void {
  if (value instanceof Prewritten) return value.write(out);
  out.push(JSON.stringify(value) ?? 'null');
}

function jsonOnce(value: object, kept: WeakMap<object, string>): string {
  let json = kept.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    kept.set(value, json);
  }
  return json;
}

function isClosedObject(schema: JsonSchema): boolean {
  return isObjectType(schema) && schema.properties !== undefined && schema.additionalProperties === false;
}

function isObjectType(schema: JsonSchema): boolean {
  return schema.type === 'object';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
