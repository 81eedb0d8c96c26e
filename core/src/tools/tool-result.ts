import { toLookoutError } from '../errors/lookout-error.js';
import { redactSecrets } from '../log/logger.js';
import type { ToolDecl } from '../plugin/manifest.js';

/**
 * The one encoding of a tool's answer as an MCP `tools/call` result: the device encodes with
 * `toolSuccess` / `toolFailure`, the hub decodes with `toolOutcomeOf`. Both sides use this module,
 * so what one writes is what the other reads; nothing is added on one side to be taken off on the other.
 */

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

/** A tools/call result as a reader takes it: only the fields it reads, with the types it reads them as. */
export interface ToolCallAnswer {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** What one tool call came to, when the device answered: the tool's JSON, or its failure. */
export type ToolOutcome = { status: 'ok'; result: unknown } | { status: 'error'; error: string; code?: string };

/** Key under `_meta` of an error result that carries the Lookout error code and details. */
export const TOOL_ERROR_META_KEY = 'lookout/error';

/**
 * A tool's JSON as an MCP result. The text block carries the JSON, always: it is the answer.
 * An object is also `structuredContent` (MCP wants an object there, which clients check against
 * the tool's output schema); any other JSON (a list, a string, null) is the text alone. A tool
 * that declares `imageContent` also gets an image block made from those fields of its result, so
 * that MCP clients show the picture; readers of the JSON (the hub) see the same result as without it.
 */
export function toolSuccess(value: unknown, decl?: Pick<ToolDecl, 'imageContent'>): ToolCallResult {
  const json = value === undefined ? null : value;
  const content: ToolContentBlock[] = [{ type: 'text', text: JSON.stringify(json) }];
  if (!isPlainObject(json)) return { content };
  const image = decl?.imageContent;
  if (image) {
    const data = json[image.dataField];
    const mimeType = json[image.mimeTypeField];
    if (typeof data === 'string' && data.length > 0 && typeof mimeType === 'string' && mimeType.startsWith('image/')) {
      content.push({ type: 'image', data, mimeType });
    }
  }
  return { content, structuredContent: json };
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
  // _meta first: the order the answer has always had on the wire (the MCP SDK's result schema put it there).
  return { _meta: { [TOOL_ERROR_META_KEY]: error }, content: [{ type: 'text', text: e.message }], isError: true };
}

/**
 * The answer as the tool's JSON, read as `toolSuccess` / `toolFailure` wrote it: an error result's
 * message and code; else `structuredContent` when given (an object tool), else the text as JSON
 * (any other JSON), else the text itself (a foreign server's prose).
 */
export function toolOutcomeOf(r: ToolCallAnswer): ToolOutcome {
  if (r.isError) {
    const meta = r._meta?.[TOOL_ERROR_META_KEY] as { code?: unknown } | undefined;
    const out: ToolOutcome = { status: 'error', error: textOf(r) || 'the tool failed without a message' };
    if (typeof meta?.code === 'string') out.code = meta.code;
    return out;
  }
  if (r.structuredContent !== undefined) return { status: 'ok', result: r.structuredContent };
  const text = textOf(r);
  const parsed = safeJson(text);
  return { status: 'ok', result: parsed !== undefined ? parsed : text };
}

/**
 * Whether a value has the shape of a tools/call result as `toolOutcomeOf` reads it: content a list,
 * structuredContent and _meta objects, isError a boolean (each optional). Nothing more is checked
 * or copied: the device checked the tool's JSON against its output schema before encoding it.
 */
export function isToolCallAnswer(v: unknown): v is ToolCallAnswer {
  if (!isPlainObject(v)) return false;
  const { content, structuredContent, isError, _meta } = v;
  return (
    (content === undefined || Array.isArray(content)) &&
    (structuredContent === undefined || isPlainObject(structuredContent)) &&
    (isError === undefined || typeof isError === 'boolean') &&
    (_meta === undefined || isPlainObject(_meta))
  );
}

/** The text blocks of an answer, joined: read only when the answer has no structuredContent to give. */
function textOf(r: ToolCallAnswer): string {
  return (r.content ?? [])
    .filter((c): c is { type: 'text'; text: string } => typeof c === 'object' && c !== null && (c as { type?: unknown }).type === 'text')
    .map((c) => c.text)
    .join('\n');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
