import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCallResult } from './mcp-pool.js';

/** What one tool call on a device came to, when the device answered. */
export type ToolOutcome = { status: 'ok'; result: unknown } | { status: 'error'; error: string; code?: string };

const ERROR_META_KEY = 'lookout/error';

/**
 * The device's answer as the tool's JSON: `structuredContent` when given (unwrapped from the
 * `{ result }` MCP requires for non-objects when that is all it holds), else the text parsed as
 * JSON, else the text itself.
 */
export function outcomeOf(r: ToolCallResult): ToolOutcome {
  if (r.isError) {
    const meta = r._meta?.[ERROR_META_KEY] as { code?: unknown } | undefined;
    const out: ToolOutcome = { status: 'error', error: textOf(r) || 'the tool failed without a message' };
    if (typeof meta?.code === 'string') out.code = meta.code;
    return out;
  }
  if (r.structuredContent !== undefined) {
    const keys = Object.keys(r.structuredContent);
    // MCP wants an object; a tool whose JSON is not one is wrapped as { result }, its text holding the JSON.
    if (keys.length === 1 && keys[0] === 'result') {
      const fromText = safeJson(textOf(r));
      if (fromText !== undefined && !isObject(fromText)) return { status: 'ok', result: fromText };
    }
    return { status: 'ok', result: r.structuredContent };
  }
  const text = textOf(r);
  const parsed = safeJson(text);
  return { status: 'ok', result: parsed !== undefined ? parsed : text };
}

/** The text blocks of an answer, joined: read only when the answer has no structuredContent to give. */
function textOf(r: ToolCallResult): string {
  return (r.content ?? [])
    .filter((c): c is { type: 'text'; text: string } => typeof c === 'object' && c !== null && (c as { type?: unknown }).type === 'text')
    .map((c) => c.text)
    .join('\n');
}

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

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
