/** Largest request head (request line and headers) accepted; more is a malformed request. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** Most header lines in one request (a real client sends about ten); more is a malformed request. */
export const MAX_HEADERS = 64;
/** Largest request body (RTSP requests here carry none worth more; SET_PARAMETER bodies are small). */
export const MAX_BODY_BYTES = 64 * 1024;

export interface RtspRequest {
  method: string;
  uri: string;
  version: string;
  /** Header names lowercased; a repeated header keeps its last value. */
  headers: Map<string, string>;
  body: Buffer;
}

export type Parsed =
  | { kind: 'request'; request: RtspRequest }
  /** An interleaved binary frame from the client (RTCP receiver reports over TCP): a sign of life, otherwise ignored. */
  | { kind: 'interleaved'; channel: number }
  | { kind: 'malformed'; reason: string };

const REQUEST_LINE = /^([A-Z_]{1,32}) (\S{1,4096}) (RTSP\/1\.0)$/;
const HEADER = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}):[ \t]*(.*)$/;

/**
 * Reads RTSP/1.0 requests and interleaved frames from a connection's bytes, in pieces of any size.
 * A malformed request cannot be resynchronised after (its framing is unknown): the caller answers
 * 400 and closes that connection, the server goes on.
 */
export class RtspReader {
  private buf: Buffer = Buffer.alloc(0);

  push(data: Buffer): Parsed[] {
    this.buf = this.buf.length === 0 ? data : Buffer.concat([this.buf, data]);
    const out: Parsed[] = [];
    for (;;) {
      if (this.buf.length === 0) break;
      if (this.buf[0] === 0x24) {
        if (this.buf.length < 4) break;
        const len = this.buf.readUInt16BE(2);
        if (this.buf.length < 4 + len) break;
        out.push({ kind: 'interleaved', channel: this.buf[1] });
        this.buf = this.buf.subarray(4 + len);
        continue;
      }
      // Blank lines between requests are tolerated.
      if (this.buf[0] === 0x0d || this.buf[0] === 0x0a) {
        this.buf = this.buf.subarray(1);
        continue;
      }
      const end = headEnd(this.buf);
      if (end === undefined) {
        if (this.buf.length > MAX_HEAD_BYTES) out.push(this.fail('request head too long'));
        break;
      }
      if (end.at > MAX_HEAD_BYTES) {
        out.push(this.fail('request head too long'));
        break;
      }
      const head = this.buf.subarray(0, end.at).toString('latin1');
      const parsed = parseHead(head);
      if (typeof parsed === 'string') {
        out.push(this.fail(parsed));
        break;
      }
      const lengthText = parsed.headers.get('content-length') ?? '0';
      if (!/^\d{1,9}$/.test(lengthText) || Number(lengthText) > MAX_BODY_BYTES) {
        out.push(this.fail('bad Content-Length'));
        break;
      }
      const bodyLength = Number(lengthText);
      const total = end.at + end.length + bodyLength;
      if (this.buf.length < total) break;
      out.push({ kind: 'request', request: { ...parsed, body: Buffer.from(this.buf.subarray(end.at + end.length, total)) } });
      this.buf = this.buf.subarray(total);
    }
    return out;
  }

  private fail(reason: string): Parsed {
    this.buf = Buffer.alloc(0);
    return { kind: 'malformed', reason };
  }
}

function headEnd(buf: Buffer): { at: number; length: number } | undefined {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, length: 4 };
  if (lf >= 0) return { at: lf, length: 2 };
  return undefined;
}

function parseHead(head: string): Omit<RtspRequest, 'body'> | string {
  const lines = head.split(/\r?\n/);
  const m = REQUEST_LINE.exec(lines[0]);
  if (!m) return 'bad request line';
  if (lines.length - 1 > MAX_HEADERS) return 'too many header lines';
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const h = HEADER.exec(line);
    if (!h) return 'bad header line';
    headers.set(h[1].toLowerCase(), h[2].trim());
  }
  return { method: m[1], uri: m[2], version: m[3], headers };
}

const REASONS: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  453: 'Not Enough Bandwidth',
  454: 'Session Not Found',
  455: 'Method Not Valid in This State',
  459: 'Aggregate Operation Not Allowed',
  461: 'Unsupported Transport',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  505: 'RTSP Version Not Supported',
};

export function rtspResponse(status: number, headers: Record<string, string | number | undefined>, body = ''): Buffer {
  const lines = [`RTSP/1.0 ${status} ${REASONS[status] ?? 'Error'}`];
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) lines.push(`${name}: ${value}`);
  const bodyBytes = Buffer.from(body, 'utf8');
  if (bodyBytes.length > 0) lines.push(`Content-Length: ${bodyBytes.length}`);
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), bodyBytes]);
}
