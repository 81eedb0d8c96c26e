import { z } from 'zod';
import type { ToolDecl } from '../plugin/manifest.js';

/** JSON Schema of an MCP tool's `inputSchema` / `outputSchema`: always an object schema. */
export interface ToolJsonSchema {
  type: 'object';
  [key: string]: unknown;
}

/**
 * The input schema as JSON Schema, from the tool's zod object. `io: 'input'` describes what a caller
 * may send (fields with defaults are optional), which is what a client needs.
 */
export function toolInputJsonSchema(decl: ToolDecl): ToolJsonSchema {
  return objectSchema(z.toJSONSchema(decl.input, { io: 'input', unrepresentable: 'any' }));
}

/**
 * The output schema, when the tool declares one whose JSON form is an object (MCP requires that;
 * clients then check `structuredContent` against it). Undefined otherwise.
 */
export function toolOutputJsonSchema(decl: ToolDecl): ToolJsonSchema | undefined {
  if (!decl.output) return undefined;
  const schema = z.toJSONSchema(decl.output, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  return schema.type === 'object' ? objectSchema(schema) : undefined;
}

function objectSchema(schema: Record<string, unknown>): ToolJsonSchema {
  // The draft marker is left out: MCP clients validate with their own draft, and the shape is plain.
  const { $schema: _draft, ...rest } = schema;
  return { ...rest, type: 'object' };
}
