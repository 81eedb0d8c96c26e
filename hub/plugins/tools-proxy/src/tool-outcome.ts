import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ToolOutcome } from 'lookout/core';

/** What one tool call on a device came to, when the device answered (core's result encoding reads it: toolOutcomeOf). */
export type { ToolOutcome };

/**
 * An MCP error the device answered with (unknown tool, invalid params), with the device's own code
 * when its `data` names one (`tool_unknown`), else `mcp_<JSON-RPC code>`.
 */
export function outcomeOfMcpError(err: McpError): ToolOutcome {
  const data = err.data as { code?: unknown } | undefined;
  return { status: 'error', error: err.message, code: typeof data?.code === 'string' ? data.code : `mcp_${err.code}` };
}

/**
 * The device has no tool of that name: a JSON-RPC error with code tool_unknown (MCP 2025-11-25), or
 * an error result with that code from a device of before.
 */
export function isUnknownTool(outcome: ToolOutcome): boolean {
  return outcome.status === 'error' && outcome.code === 'tool_unknown';
}
