import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import {
  compileJsonWriter,
  compileObjectWriter,
  Prewritten,
  RecordEntries,
  type JsonPieces,
  type JsonSchema,
} from '../../../../../hub/plugins/bus-cache/src/json-writer.js';

const schemaOf = (s: z.ZodType): JsonSchema => z.toJSONSchema(s, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
const text = (write: (v: unknown, out: JsonPieces) => void, v: unknown): string => {
  const out: JsonPieces = [];
  write(v, out);
  return out.join('');
};

const Shape = z.object({
  name: z.string(),
  count: z.number().int(),
  note: z.string().optional(),
  message: z.looseObject({}).nullable(),
  per_topic: z.record(z.string(), z.object({ at: z.string(), n: z.number() })),
});

describe('JSON writers compiled from a JSON Schema', () => {
  const write = compileJsonWriter(schemaOf(Shape));

  it('writes what JSON.stringify writes, the keys of a closed object in the schema’s order', () => {
    const value = {
      per_topic: { b: { n: 2, at: 'x' }, '"odd"\u2028': { at: 'y', n: NaN } },
      message: { z: 1, a: ['\ud800', '\u2028'] },
      count: -0,
      name: 'cam\n"1"',
    };
    const ordered = { name: value.name, count: -0, message: value.message, per_topic: { b: { at: 'x', n: 2 }, '"odd"\u2028': { at: 'y', n: NaN } } };
    assert.equal(text(write, value), JSON.stringify(ordered));
  });

  it('leaves out an undefined field as JSON.stringify does, and writes the rest of an off-schema value as it is', () => {
    assert.equal(text(write, { name: 'a', count: 1, note: undefined, message: null, per_topic: {} }), '{"name":"a","count":1,"message":null,"per_topic":{}}');
    assert.equal(text(write, [1, 'two']), '[1,"two"]');
    assert.equal(
      text(write, { name: 2, count: 'three', message: [], per_topic: { t: { at: null, n: Infinity } } }),
      '{"name":2,"count":"three","message":[],"per_topic":{"t":{"at":null,"n":null}}}',
    );
    assert.equal(text(write, null), 'null');
  });

  it('writes a record given entry by entry, and pushes what is already written as it is', () => {
    const records = compileJsonWriter(schemaOf(z.record(z.string(), z.object({ n: z.number() }))));
    const pre = new Prewritten((out) => out.push('{"n":7}'));
    assert.equal(
      text(
        records,
        new RecordEntries([
          ['x', pre],
          ['y', { n: 8, extra: 1 }],
        ]),
      ),
      '{"x":{"n":7},"y":{"n":8}}',
    );
    assert.equal(text(records, new RecordEntries([])), '{}');
  });

  it('leaves a hole for a field written later, and writes a kept object’s JSON once', () => {
    const json = new WeakMap<object, string>();
    const entry = compileObjectWriter(schemaOf(z.looseObject({ a: z.number(), age: z.number(), msg: z.looseObject({}) })), {
      holes: new Set(['age']),
      once: { keys: new Set(['msg']), json },
    });
    const msg = { k: 1 };
    const out: JsonPieces = [];
    entry({ a: 1, msg, extra: true }, out);
    assert.deepEqual(out, ['{"a":1', ',"age":', null, ',"msg":{"k":1}', '}']);
    assert.equal(json.get(msg), '{"k":1}');
  });
});
