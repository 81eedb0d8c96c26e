import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import { z } from 'zod';

type Ajv2020Ctor = new (options: Record<string, unknown>) => { compile(schema: object): ValidateFunction };
// ajv ships CommonJS; its 2020-12 build is a subpath without an ESM entry.
const Ajv2020 = (createRequire(import.meta.url)('ajv/dist/2020') as { default: Ajv2020Ctor }).default;

/**
 * A contract check for the messages that arrive at 10 Hz per device (dets, telemetry): the zod
 * schema, still the one source of truth, is turned into JSON Schema and compiled by ajv, which
 * decides about 20 times faster. zod runs only on a refusal, to name the field at fault, and its
 * verdict wins. Compiled only where the JSON Schema says exactly what zod checks: no refinement
 * JSON Schema cannot express, no `format` without the pattern that enforces it, no maxLength
 * (JSON Schema counts code points where zod counts UTF-16 units).
 */
export interface ContractCheck {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: z.ZodError };
  readonly compiled: boolean;
}

export function compileContract(schema: z.ZodType): ContractCheck {
  const zodOnly: ContractCheck = { safeParse: (v) => schema.safeParse(v), compiled: false };
  let json: Record<string, unknown>;
  let checksLost = false;
  try {
    json = z.toJSONSchema(schema, {
      io: 'input',
      unrepresentable: 'throw',
      target: 'draft-2020-12',
      // Refinements and transforms leave no trace in JSON Schema: such a contract stays with zod.
      override: ({ zodSchema }) => {
        if (losesChecks(zodSchema)) checksLost = true;
      },
    });
  } catch {
    return zodOnly;
  }
  if (checksLost || !faithful(json)) return zodOnly;
  let validate: ValidateFunction;
  try {
    validate = new Ajv2020({ strict: false, validateFormats: false, allErrors: false }).compile(json);
  } catch {
    return zodOnly;
  }
  return {
    compiled: true,
    safeParse(value) {
      // Accepted as is: the cache keeps the message as published (unknown fields included).
      if (validate(value)) return { success: true, data: value };
      return schema.safeParse(value);
    },
  };
}

/** True when nothing in the JSON Schema is looser than the zod schema it came from. */
export function faithful(node: unknown): boolean {
  if (Array.isArray(node)) return node.every(faithful);
  if (typeof node !== 'object' || node === null) return true;
  const o = node as Record<string, unknown>;
  if ('maxLength' in o) return false;
  if ('format' in o && !('pattern' in o) && !hasPatternInAllOf(o)) return false;
  return Object.values(o).every(faithful);
}

function hasPatternInAllOf(o: Record<string, unknown>): boolean {
  return Array.isArray(o.allOf) && o.allOf.some((s) => typeof s === 'object' && s !== null && 'pattern' in s);
}

interface DefLike {
  type?: string;
  checks?: { _zod?: { def?: { check?: string } } }[];
  out?: unknown;
}

function losesChecks(schema: unknown): boolean {
  const def = (schema as { _zod?: { def?: DefLike } })._zod?.def;
  if (!def) return false;
  if (def.type === 'transform' || def.type === 'custom') return true;
  // A pipe shows its input side; what its output side checks (a transform, a refinement) is lost.
  if (def.type === 'pipe' && def.out !== undefined && (losesChecks(def.out) || (def.out as { _zod?: { def?: DefLike } })._zod?.def?.type !== 'unknown'))
    return true;
  return (def.checks ?? []).some((c) => c._zod?.def?.check === 'custom');
}
