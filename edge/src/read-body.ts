import type { IncomingMessage } from 'node:http';
import { LookoutError } from 'lookout/core';

/**
 * Reads a request body up to `limit` bytes. A larger body (announced or actual) is refused as soon
 * as it is known, so an oversized request costs at most `limit` bytes of memory.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const announced = Number(req.headers['content-length']);
  if (Number.isFinite(announced) && announced > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(limit: number): LookoutError {
  return new LookoutError('payload_too_large', `the request body exceeds ${limit} bytes`, { details: { limit } });
}
