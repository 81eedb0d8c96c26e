import { z } from 'zod';

/** Body of `POST /tools/call` (spec 01): the tool and its arguments (an empty object is allowed). */
export const ToolCallRequestSchema = z
  .looseObject({
    tool: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()),
  })
  .describe('POST /tools/call body');
/** A `POST /tools/call` body as parsed (see ToolCallRequestSchema). */
export type ToolCallRequest = z.infer<typeof ToolCallRequestSchema>;

/** The `status` of a `POST /tools/call` answer: `error` when the tool failed (see ToolCallResponseSchema). */
export const TOOL_CALL_STATUS_VALUES = ['ok', 'error'] as const;

/**
 * Answer of `POST /tools/call` (spec 01: tool, target, status, result). A tool's own failure is
 * `status: "error"` with `error: { code, message, details? }` (DESIGN.md's error shape) and
 * `result: null`; otherwise `result` is the tool's JSON. The code is the device's when it gave
 * one (forwarded as is), else `tool_failed`.
 */
export const ToolCallResponseSchema = z
  .looseObject({
    tool: z.string().min(1),
    target: z.string().min(1),
    status: z.enum(TOOL_CALL_STATUS_VALUES),
    result: z.unknown(),
    error: z
      .looseObject({
        code: z.string().min(1),
        message: z.string().min(1),
        details: z.unknown().optional(),
      })
      .optional(),
  })
  .describe('POST /tools/call answer');
/** A `POST /tools/call` answer as parsed (see ToolCallResponseSchema). */
export type ToolCallResponse = z.infer<typeof ToolCallResponseSchema>;
