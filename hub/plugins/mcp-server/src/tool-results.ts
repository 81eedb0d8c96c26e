import type { LookoutError } from 'lookout/core';
import type { Sources } from './sources.js';

/** Key of an answer's `_meta` naming where its numbers come from (devices, time span). */
export const SOURCES_META_KEY = 'lookout/sources';
/** Key of an error result's `_meta` carrying the Lookout code, as the device tool server sets it. */
export const ERROR_META_KEY = 'lookout/error';

type Block = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

export interface HubToolResult {
  [key: string]: unknown;
  content: Block[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/**
 * A successful answer as a device's tool server gives it (core's toolSuccess): the JSON as text,
 * `structuredContent` (an object, else `{ result }`), and the pictures as image blocks (base64 data
 * with an image/* type, what MCP clients show); where the numbers come from in `_meta`.
 */
export function successResult(value: unknown, sources: Sources, images: { data: string; mimeType: string }[] = []): HubToolResult {
  const json = value === undefined ? null : value;
  const content: Block[] = [{ type: 'text', text: JSON.stringify(json) }];
  for (const image of images) if (image.data.length > 0 && image.mimeType.startsWith('image/')) content.push({ type: 'image', ...image });
  return { content, structuredContent: isObject(json) ? json : { result: json }, _meta: { [SOURCES_META_KEY]: sources } };
}

/**
 * A device's picture answered the way its own tool server answers it (get_live_jpeg's
 * `imageContent`: `jpeg_base64` with `content_type`), so a call through the hub shows the same block.
 */
export function imagesOf(value: unknown): { data: string; mimeType: string }[] {
  if (!isObject(value)) return [];
  const data = value.jpeg_base64;
  const mimeType = value.content_type;
  return typeof data === 'string' && typeof mimeType === 'string' && mimeType.startsWith('image/') ? [{ data, mimeType }] : [];
}

/** A tool's own failure (or a device that did not answer) as an MCP error result with its code. */
export function failureResult(error: { code: string; message: string }, sources?: Sources): HubToolResult {
  return {
    content: [{ type: 'text', text: error.message }],
    isError: true,
    _meta: { [ERROR_META_KEY]: { code: error.code, message: error.message }, ...(sources ? { [SOURCES_META_KEY]: sources } : {}) },
  };
}

export function errorOf(e: LookoutError): { code: string; message: string } {
  return { code: e.code, message: e.message };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
