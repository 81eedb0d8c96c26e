import { isObject } from 'lookout/core';

/** An answer the tool server gives itself, before the MCP SDK sees the message. */
export interface EarlyAnswer {
  status: number;
  body: { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } };
}

/** The params of a tools/call that checkMcpMessage let through: the tool server's handler reads them as such. */
export interface CheckedToolCall {
  name: string;
  arguments?: Record<string, unknown>;
}

/** JSON-RPC: the request is not a valid request object. */
export const INVALID_REQUEST = -32600;
/** JSON-RPC: invalid method parameters (MCP uses it for unknown tools too). */
export const INVALID_PARAMS = -32602;

/**
 * The device's one check of a tools/call envelope (the tool registry then checks the arguments
 * against the tool's own schema; the SDK's Server does not parse the call again: tool-server.ts).
 * Checks what the SDK would refuse unreadably or accept wrongly:
 * - a batch (an array) is refused: MCP removed JSON-RPC batching in 2025-06-18, and a batch would
 *   multiply the work of one request past every per-request bound;
 * - a `tools/call` whose params are not `{name: string, arguments?: object}` gets -32602 naming
 *   each bad field, where the SDK answers -32603 (internal error) with a raw schema dump.
 * Undefined when the message may go on to the SDK.
 */
export function checkMcpMessage(message: unknown): EarlyAnswer | undefined {
  if (Array.isArray(message)) {
    return { status: 400, body: rpcError(null, INVALID_REQUEST, 'Invalid Request: JSON-RPC batches are not supported; send one message per request') };
  }
  if (!isObject(message) || message.method !== 'tools/call') return undefined;
  const id = message.id;
  // Without a usable id it is not a request: the SDK refuses it as an invalid message.
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const params = message.params;
  const problems: string[] = [];
  if (!isObject(params)) {
    problems.push(`params must be an object {name, arguments}, not ${describe(params)}`);
  } else {
    if (typeof params.name !== 'string' || params.name.length === 0)
      problems.push(`params.name must name a tool (a non-empty string), not ${describe(params.name)}`);
    if (params.arguments !== undefined && !isObject(params.arguments)) problems.push(`params.arguments must be an object, not ${describe(params.arguments)}`);
  }
  if (problems.length === 0) return undefined;
  return { status: 200, body: rpcError(id, INVALID_PARAMS, `Invalid params for tools/call: ${problems.join('; ')}`) };
}

function rpcError(id: string | number | null, code: number, message: string): EarlyAnswer['body'] {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}
