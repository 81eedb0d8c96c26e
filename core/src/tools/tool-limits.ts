/**
 * Sizes a tool call may have wherever it enters: the hub's POST /tools/call, the device's tool
 * server and its cmd/tool topic. One set of numbers, so that what the hub accepts a device accepts
 * too (a call refused only at the device would come back to the caller as a gateway failure).
 */
export const TOOL_LIMITS = {
  /** Arguments of one call, as compact JSON. Tool arguments are small settings; 64 KiB is generous. */
  maxArgumentBytes: 64 * 1024,
  /** A tool name (MCP 2025-11-25 advises at most 128 characters). */
  maxToolNameChars: 128,
  /** Room for what wraps the arguments: the JSON-RPC envelope or the cmd message, tool name, ids. */
  envelopeBytes: 4 * 1024,
} as const;

/** Largest request body or cmd payload that carries one tool call. */
export const MAX_TOOL_MESSAGE_BYTES = TOOL_LIMITS.maxArgumentBytes + TOOL_LIMITS.envelopeBytes;

/** Size of arguments as they travel (compact JSON, UTF-8). */
export function argumentBytes(args: unknown): number {
  return Buffer.byteLength(JSON.stringify(args ?? {}), 'utf8');
}
