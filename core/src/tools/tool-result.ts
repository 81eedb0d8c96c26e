import { toLookoutError } from '../errors/lookout-error.js';
import { redactSecrets } from '../log/logger.js';
import type { ToolDecl } from '../plugin/manifest.js';

/** MCP content blocks this server produces: the JSON as text, and a tool's picture (ToolDecl.imageContent). */
export type ToolContentBlock = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

/** The MCP `tools/call` result shape this server produces. */
export interface ToolCallResult {
  [key: string]: unknown;
  content: ToolContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** Key under `_meta` of an error result that carries the Lookout error code and details. */
export const TOOL_ERROR_META_KEY = 'lookout/error';

/**
 * A tool's JSON as an MCP result: `structuredContent` is the JSON itself (wrapped as `{ result }`
 * when it is not an object, as MCP requires an object) and a text block carries the same JSON for
 * clients that read only text. A tool that declares `imageContent` also gets an image block made
 * from those fields of its result, so that MCP clients show the picture; readers of
 * `structuredContent` (the hub) see the same result as without it.
 */
export function toolSuccess(value: unknown, decl?: Pick<ToolDecl, 'imageContent'>): ToolCallResult {
  const json = value === undefined ? null : value;
  const structured = isPlainObject(json) ? json : { result: json };
  const content: ToolContentBlock[] = [{ type: 'text', text: JSON.stringify(json) }];
  const image = decl?.imageContent;
  if (image) {
    const data = structured[image.dataField];
    const mimeType = structured[image.mimeTypeField];
    if (typeof data === 'string' && data.length > 0 && typeof mimeType === 'string' && mimeType.startsWith('image/')) {
      content.push({ type: 'image', data, mimeType });
    }
  }
  return { content, structuredContent: structured };
}

/**
 * A failure as an MCP error result (`isError: true`): the text is the message, which the hub reports
 * as the tool's message. The code and details (secrets removed) go under `_meta`, not
 * `structuredContent`, which clients would check against the tool's output schema.
 */
export function toolFailure(err: unknown): ToolCallResult {
  const e = toLookoutError(err);
  const error: Record<string, unknown> = { code: e.code, message: e.message };
  if (e.details !== undefined) error.details = redactSecrets(e.details);
  return { content: [{ type: 'text', text: e.message }], isError: true, _meta: { [TOOL_ERROR_META_KEY]: error } };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
