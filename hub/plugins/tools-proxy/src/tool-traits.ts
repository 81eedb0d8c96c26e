/** What a device says about one of its tools in tools/list, as far as the hub acts on it. */
export interface ToolTraits {
  /** The tool changes nothing (MCP `readOnlyHint`). */
  readOnly: boolean;
  /** Running it twice is running it once (`readOnlyHint` or `idempotentHint`): the pool may retry it. */
  retryable: boolean;
}

/**
 * Traits from a tools/list entry. Anything not stated is taken as the unsafe case (MCP's own
 * defaults: not read-only, not idempotent), so a device that says nothing gets no retries.
 */
export function toolTraitsOf(tool: { annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean } }): ToolTraits {
  const readOnly = tool.annotations?.readOnlyHint === true;
  return { readOnly, retryable: readOnly || tool.annotations?.idempotentHint === true };
}
