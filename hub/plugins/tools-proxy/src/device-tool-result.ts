import { z } from 'zod';
import { isToolCallAnswer, type ToolCallAnswer } from 'lookout/core';

/**
 * A device's tools/call answer as the hub takes it: the shape core's result encoding reads
 * (isToolCallAnswer: content a list, structuredContent and _meta objects, isError a boolean), and
 * nothing more is checked or copied. The device checked the tool's JSON against its declared output
 * schema before encoding it (ToolRegistry.call: tool_output_invalid otherwise); the SDK's
 * CallToolResultSchema would parse every content block into a copy, and callTool would run the
 * output schema once more. An answer of another shape still fails the call (a ZodError, as before:
 * the device is then unreachable for the caller).
 */
export const DEVICE_TOOL_RESULT = z.custom<ToolCallAnswer>(isToolCallAnswer, {
  message: 'not an MCP tool result (content, structuredContent, isError, _meta)',
});
