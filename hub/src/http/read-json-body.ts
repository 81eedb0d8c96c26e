import type { IncomingMessage } from 'node:http';
import { MAX_REQUEST_JSON_DEPTH } from 'lookout/core/host';
import { jsonDeeperThan, LookoutError } from 'lookout/core';

/**
 * Reads a JSON request body, refusing more than `limit` bytes before buffering them: a declared
 * Content-Length over the limit is refused at once, a chunked body as soon as it passes it.
 * An empty body reads as undefined.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  return parseJsonBody(await readBodyBytes(req, limit), req.headers['content-type']);
}

/** The body's bytes, bounded as readJsonBody's. */
export async function readBodyBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      // Stop reading; the connection closes after the answer instead of draining an endless upload.
      req.unpipe();
      req.pause();
      throw tooLarge(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** JSON from a body's bytes (undefined when empty): its content type, depth and syntax checked. */
export function parseJsonBody(bytes: Buffer, type: string | undefined): unknown {
  if (bytes.length === 0) return undefined;
  if (type !== undefined && !/^application\/(?:[\w.+-]*\+)?json\b/i.test(type)) {
    throw new LookoutError('unsupported_media_type', `the request body must be application/json, not ${type}`, { details: { content_type: type } });
  }
  // Deep nesting passes a size limit and then overflows the stack of whatever walks it (a 500).
  if (jsonDeeperThan(bytes, MAX_REQUEST_JSON_DEPTH)) {
    throw new LookoutError('bad_request', `body: nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels`, { details: { field: 'body' } });
  }
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new LookoutError('bad_request', `body: not valid JSON (${(err as Error).message})`, { details: { field: 'body' } });
  }
}

function tooLarge(limit: number): LookoutError {
  return new LookoutError('payload_too_large', `the request body is larger than ${limit} bytes`, { details: { limit_bytes: limit } });
}
