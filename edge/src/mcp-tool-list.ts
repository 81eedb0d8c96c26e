import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDecl } from 'lookout/core';
import { toolInputJsonSchema, toolOutputJsonSchema } from 'lookout/core/host';

/**
 * MCP tool annotations from a declaration. Both hints are always given so that a client never falls
 * back on the spec's defaults (not read-only, not idempotent) by omission; the hub retries a call
 * after a failure only when one of them is true.
 */
export function toolAnnotations(decl: ToolDecl): { readOnlyHint: boolean; idempotentHint: boolean } {
  const readOnly = decl.readOnly === true;
  return { readOnlyHint: readOnly, idempotentHint: readOnly || decl.idempotent === true };
}

/** One entry of `tools/list`: name, description, JSON Schemas and annotations. */
export function mcpToolListing(decl: ToolDecl): Tool {
  const tool: Tool = {
    name: decl.name,
    description: decl.description,
    inputSchema: toolInputJsonSchema(decl),
    annotations: toolAnnotations(decl),
  };
  const output = toolOutputJsonSchema(decl);
  if (output) tool.outputSchema = output;
  return tool;
}
