import { seededRandom } from '../../../../../lib/random/seeded-random.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { BUS_CONTRACTS } from '../../../../../core/src/contracts/bus-contracts.js';
import { compileContract, faithful } from '../../../../../hub/plugins/bus-cache/src/compiled-contract.js';
import { HOT_CONTRACTS } from '../../../../../hub/plugins/bus-cache/src/ingest.js';
import { examples } from '../../../../support/contract-examples.js';

const prng = (seed: number): (() => number) => {
  const random = seededRandom(seed);
  return () => random.next();
};

const ODD: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2,
  -0.0001,
  1e308,
  Number.MAX_SAFE_INTEGER + 2,
  '',
  'x',
  '\u{1F600}',
  [],
  [1, 2, 3, 4],
  [0, 0, 0],
  {},
  { c: 0 },
  '2026-11-22T01:58:16Z',
  '2026-11-22T01:58:16+00:00',
  '2026-11-22T01:58:16+01:00',
  '2026-02-30T00:00:00Z',
  '2026-11-22 01:58:16Z',
];

/** Replaces, deletes or adds one value somewhere in a copy of `value`. */
function mutate(value: unknown, rand: () => number): unknown {
  if (Array.isArray(value)) {
    const copy = [...value];
    const r = rand();
    if (copy.length && r < 0.5)
      copy[Math.floor(rand() * copy.length)] = rand() < 0.5 ? mutate(copy[Math.floor(rand() * copy.length)], rand) : ODD[Math.floor(rand() * ODD.length)];
    else if (r < 0.7) copy.pop();
    else copy.push(ODD[Math.floor(rand() * ODD.length)]);
    return copy;
  }
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const key = keys[Math.floor(rand() * keys.length)];
    const r = rand();
    if (r < 0.45) copy[key] = mutate(copy[key], rand);
    else if (r < 0.75) copy[key] = ODD[Math.floor(rand() * ODD.length)];
    else if (r < 0.85) delete copy[key];
    else copy[`extra_${Math.floor(rand() * 5)}`] = ODD[Math.floor(rand() * ODD.length)];
    return copy;
  }
  return ODD[Math.floor(rand() * ODD.length)];
}

const VALID: Record<string, () => unknown> = { dets: examples.dets, telemetry: examples.telemetry };

describe('compiled contract check', () => {
  it('is compiled for the 10 Hz contracts', () => {
    for (const key of HOT_CONTRACTS) assert.equal(compileContract(BUS_CONTRACTS[key].schema).compiled, true, key);
  });

  for (const key of HOT_CONTRACTS) {
    it(`${key}: agrees with zod on the spec example and 20 000 mutations of it`, () => {
      const check = compileContract(BUS_CONTRACTS[key].schema);
      const zod = BUS_CONTRACTS[key].schema;
      const rand = prng(7 + key.length);
      let accepted = 0;
      let refused = 0;
      for (let i = 0; i < 20_000; i++) {
        let v = VALID[key]();
        const rounds = 1 + Math.floor(rand() * 3);
        for (let r = 0; r < rounds; r++) v = mutate(v, rand);
        const expected = zod.safeParse(v).success;
        const got = check.safeParse(v);
        assert.equal(got.success, expected, JSON.stringify(v));
        if (expected) accepted++;
        else refused++;
        if (!got.success) assert.ok(got.error.issues.length > 0, 'a refusal carries zod\u2019s issues');
      }
      assert.ok(accepted > 1000 && refused > 1000, `both verdicts exercised (${accepted} accepted, ${refused} refused)`);
    });
  }

  it('keeps a valid message as published, unknown fields included', () => {
    const check = compileContract(BUS_CONTRACTS.dets.schema);
    const m = { ...examples.dets(), vendor_field: { a: 1 } };
    const r = check.safeParse(m);
    assert.equal(r.success, true);
    assert.equal(r.success && r.data, m);
  });

  it('falls back to zod where JSON Schema would be looser', () => {
    assert.equal(faithful(z.toJSONSchema(z.object({ a: z.string().max(3) }))), false);
    assert.equal(faithful({ type: 'string', format: 'email' }), false);
    assert.equal(compileContract(z.object({ a: z.string().max(3) })).compiled, false);
    assert.equal(compileContract(z.object({ a: z.number().refine((n) => n % 2 === 0) })).compiled, false);
    assert.equal(compileContract(z.object({ a: z.object({ b: z.string() }).superRefine(() => undefined) })).compiled, false);
    assert.equal(compileContract(z.object({ a: z.string().transform((s) => s.length) })).compiled, false);
    const refined = compileContract(z.object({ a: z.number().refine((n) => n % 2 === 0) }));
    assert.equal(refined.safeParse({ a: 3 }).success, false);
    assert.equal(compileContract(z.object({ a: z.number().int().min(0) })).compiled, true);
  });
});
