import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { jsonDeeperThan, reply, type RouteReply, type RouteRequest } from 'lookout/core';

/** Deeper JSON is refused before it is parsed: no JSON-RPC message needs more (the device's bound too). */
export const MAX_MCP_JSON_DEPTH = 32;

/** Headers the streamable HTTP transport reads; the hub's middleware has judged Host, Origin and the token. */
const PASSED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/**
 * One POST /mcp: a fresh SDK server and stateless transport per request (as the device's tool server
 * does: no session to keep, any replica answers). The answer is an SSE stream when the client
 * accepts one (progress notifications travel on it before the result) and is streamed through the
 * hub's route reply; a body that is not JSON is a JSON-RPC parse error (-32700).
 */
export async function serveMcpPost(req: RouteRequest, createServer: () => Server): Promise<RouteReply> {
  const raw = req.rawBody ?? Buffer.alloc(0);
  let body: unknown;
  try {
    if (jsonDeeperThan(raw, MAX_MCP_JSON_DEPTH)) return rpcFailure(400, -32700, `parse error: nested deeper than ${MAX_MCP_JSON_DEPTH} levels`);
    body = JSON.parse(raw.toString('utf8')) as unknown;
  } catch (err) {
    return rpcFailure(400, -32700, `parse error: ${(err as Error).message}`);
  }
  const headers = new Headers();
  for (const name of PASSED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  // HTTP's `*/*` (or no Accept at all) accepts both answers the transport gives; it matches names only.
  const accept = headers.get('accept');
  if (accept === null || accept.includes('*/*')) headers.set('accept', 'application/json, text/event-stream');
  const server = createServer();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    void transport.close();
    void server.close();
  };
  req.signal.addEventListener('abort', close, { once: true });
  await server.connect(transport);
  const response = await transport.handleRequest(new Request('http://hub.local/mcp', { method: 'POST', headers, body: new Uint8Array(raw) }), {
    parsedBody: body,
  });
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'content-type' && name !== 'content-length') out[name] = value;
  });
  if (!response.body) {
    close();
    return reply({ status: response.status, body: null, headers: out });
  }
  const stream = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  stream.once('close', close);
  return reply({ status: response.status, body: stream, type: response.headers.get('content-type') ?? 'application/json', headers: out });
}

function rpcFailure(status: number, code: number, message: string): RouteReply {
  return reply({ status, body: { jsonrpc: '2.0', error: { code, message }, id: null }, type: 'application/json' });
}
