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
  return compile(schema).write;
}

/** The JSON of a value of `schema` as one string (for a value written apart from the pieces of its object). */
export function compileJsonText(schema: JsonSchema): (value: unknown) => string {
  const { write, json } = compile(schema);
  if (json) return json;
  return (value) => {
    const out: JsonPieces = [];
    write(value, out);
    return out.join('');
  };
}

/** A compiled writer; `json` too when the value's JSON is one piece (a scalar, or a value written whole). */
interface Compiled {
  write: JsonWriter;
  json?: (value: unknown) => string;
}

function compile(schema: JsonSchema): Compiled {
  if (isClosedObject(schema)) return { write: compileObjectWriter(schema) };
  const values = schema.additionalProperties;
  if (isObjectType(schema) && !schema.properties && typeof values === 'object') return { write: recordWriter(compile(values)) };
  const json = SCALAR_JSON[String(schema.type)] ?? wholeJson;
  return { json, write: (value, out) => (value instanceof Prewritten ? value.write(out) : out.push(json(value))) };
}

/**
 * A declared boolean or number as JSON.stringify writes it, without calling it: String of a finite
 * number is its JSON (-0 too), and a value off its type is written whole.
 */
const SCALAR_JSON: Record<string, (value: unknown) => string> = {
  boolean: (v) => (v === true ? 'true' : v === false ? 'false' : wholeJson(v)),
  number: (v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : wholeJson(v)),
  integer: (v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : wholeJson(v)),
};

/**
 * The writer of an object of `schema`, its declared keys in order, even where the schema leaves it
 * open to more (a route's own entry, whose extra keys nobody sets): those are not written.
 */
export function compileObjectWriter(schema: JsonSchema, options: ObjectWriterOptions = {}): JsonWriter {
  const fields = Object.entries(schema.properties ?? {}).map(([key, s]) => {
    const { write, json } = compile(s);
    return {
      key,
      head: `${JSON.stringify(key)}:`,
      write,
      json,
      hole: options.holes?.has(key) === true,
      once: options.once?.keys.has(key) === true,
    };
  });
  const kept = options.once?.json;
  return (value, out) => {
    if (value instanceof Prewritten) return value.write(out);
    if (!isPlainObject(value)) return writeWhole(value, out);
    let first = true;
    for (const f of fields) {
      const v = value[f.key];
      if (v === undefined && !f.hole) continue;
      const head = first ? `{${f.head}` : `,${f.head}`;
      first = false;
      // A value written whole goes in the same piece as its key: fewer pieces to join.
      if (f.hole) out.push(head, null);
      else if (f.once && kept && typeof v === 'object' && v !== null) out.push(head + jsonOnce(v, kept));
      else if (f.json && !(v instanceof Prewritten)) out.push(head + f.json(v));
      else {
        out.push(head);
        f.write(v, out);
      }
    }
    out.push(first ? '{}' : '}');
  };
}

/** Keys a record writer keeps written (device ids, topic suffixes: few, written again and again). */
const MAX_KEPT_HEADS = 20_000;

function recordWriter(value: Compiled): JsonWriter {
  const writeValue = value.write;
  // `{"key":` and `,"key":` of each key, made once: one flat piece per entry to join.
  const heads = new Map<string, readonly [string, string]>();
  const headsOf = (key: string): readonly [string, string] => {
    let pair = heads.get(key);
    if (pair === undefined) {
      if (heads.size >= MAX_KEPT_HEADS) heads.clear();
      const head = `${JSON.stringify(key)}:`;
      pair = [`{${head}`, `,${head}`];
      heads.set(key, pair);
    }
    return pair;
  };
  return (value, out) => {
    if (value instanceof Prewritten) return value.write(out);
    const entries = value instanceof RecordEntries ? value.entries : isPlainObject(value) ? Object.entries(value) : undefined;
    if (!entries) return writeWhole(value, out);
    let first = true;
    for (const [key, v] of entries) {
      if (v === undefined) continue;
      out.push(headsOf(key)[first ? 0 : 1]);
      first = false;
      writeValue(v, out);
    }
    out.push(first ? '{}' : '}');
  };
}

function writeWhole(value: unknown, out: JsonPieces): void {
  if (value instanceof Prewritten) return value.write(out);
  out.push(wholeJson(value));
}

/** As JSON.stringify writes it (null for what it leaves out, as a property's value never is here). */
function wholeJson(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
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
