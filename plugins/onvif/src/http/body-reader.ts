import type { IncomingMessage } from 'node:http';

/** The body is larger than allowed (declared or as it arrives): nothing more of it is read. */
export class BodyTooLarge extends Error {}
/** The body did not arrive in time: nothing more of it is read. */
export class BodyTimedOut extends Error {}

/**
 * Reads a request body of at most `maxBytes` within `deadlineMs`. A Content-Length above the bound
 * is refused before a byte is read; a body that grows past it, or is still arriving at the
 * deadline, is refused at once. On refusal the stream is paused (the caller closes the connection):
 * the rest is never read, so a stranger's bytes cost neither memory nor time.
 */
export function readBody(req: IncomingMessage, maxBytes: number, deadlineMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBytes) return reject(new BodyTooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (err: Error): void => {
      clearTimeout(timer);
      chunks.length = 0;
      req.off('data', onData);
      req.off('end', onEnd);
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) return stop(new BodyTooLarge());
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks, size));
    };
    const timer = setTimeout(() => stop(new BodyTimedOut()), deadlineMs);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', (err) => stop(err));
  });
}
