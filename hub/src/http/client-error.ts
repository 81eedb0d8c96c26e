import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Answers a request Node refuses before Koa sees it (malformed HTTP, headers too large, a request
 * not received in time) with the hub's JSON error body, where Node would send an empty one.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // Nothing can be answered on a reset socket, nor after a response has started on it.
  if (err.code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request was not received in time']
        : [400, 'the request is not valid HTTP'];
  const body = JSON.stringify({ error: { code: 'bad_request', message } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
