import { z } from 'zod';
import type { ToolCallResult } from './mcp-pool.js';

/**
 * A device's tools/call answer as the hub takes it: the fields the hub reads have the types it reads
 * them as (content a list, structuredContent and _meta objects, isError a boolean), and nothing more
 * is checked or copied. The device validated its answer against the tool's output schema before
 * sending it; the SDK's CallToolResultSchema would parse every content block into a copy, and
 * callTool would run the output schema once more. An answer of another shape still fails the call
 * (a ZodError, as before: the device is then unreachable for the caller).
 */
export const DEVICE_TOOL_RESULT = z.custom<ToolCallResult>(isToolCallResult, {
  message: 'not an MCP tool result (content, structuredContent, isError, _meta)',
});

export function isToolCallResult(v: unknown): v is ToolCallResult {
  if (!isRecord(v)) return false;
  const { content, structuredContent, isError, _meta } = v;
  return (
    (content === undefined || Array.isArray(content)) &&
    (structuredContent === undefined || isRecord(structuredContent)) &&
    (isError === undefined || typeof isError === 'boolean') &&
    (_meta === undefined || isRecord(_meta))
  );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
