import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { MIN_TOOL_TOKEN_CHARS } from 'lookout/lib/auth';
import { LookoutError, toLookoutError, type Logger, jsonDeeperThan, MAX_TOOL_MESSAGE_BYTES } from 'lookout/core';
import { readBody } from './read-body.js';
import { MAX_REQUEST_JSON_DEPTH, type ToolRegistry, toolFailure, toolSuccess } from 'lookout/core/host';
import { boundPort, closeServer, listen, isLoopbackHost } from 'lookout/lib/net';
import { checkMcpMessage, type CheckedToolCall } from './mcp-message-check.js';
import { mcpToolListing } from './mcp-tool-list.js';
import { toolAccessGuard } from './tool-access.js';
import { RECORDINGS_PATH, recordingRoute } from './recording-route.js';
import type { RecordingFiles } from 'lookout/lib/storage';
import { SERVED_TLS_CONTEXT as TOOL_TLS_CONTEXT, reloadOnSighup, servedPairAtStart } from 'lookout/lib/tls';

export const DEFAULT_TOOL_PORT = 8765;
export const DEFAULT_TOOL_HOST = '127.0.0.1';
export const MCP_PATH = '/mcp';
export const METRICS_PATH = '/metrics';
/** One tool call: arguments up to the shared tool limit plus the JSON-RPC envelope (core/src/tools/tool-limits.ts). */
export const DEFAULT_MAX_BODY_BYTES = MAX_TOOL_MESSAGE_BYTES;

/** A tools/call request as the protocol layer passes it on: its params were checked by checkMcpMessage. */
const TOOLS_CALL = z.looseObject({ method: z.literal('tools/call') });

export interface ToolServerOptions {
  tools: ToolRegistry;
  logger: Logger;
  /** 0 picks a free port. Default 8765. */
  port?: number;
  /** Default 127.0.0.1 (development); a device binds its LAN address or 0.0.0.0. */
  host?: string;
  /**
   * Bearer token callers beyond loopback must present (the device's tool token, derived from the
   * fleet secret). Required when `host` is not loopback; never logged.
   */
  token?: string;
  /** Browser origins allowed to call (`scheme://host[:port]`); a request with any other Origin is 403. */
  allowedOrigins?: readonly string[];
  maxBodyBytes?: number;
  /** Reported in the MCP `initialize` answer. */
  serverInfo?: { name: string; version: string };
  /** The Prometheus exposition `GET /metrics` answers (behind the same access rules as /mcp); absent: 404. */
  metrics?: () => Promise<{ body: string; contentType: string }>;
  /**
   * The recorder's folder, served read-only at `GET|HEAD /recordings/<file>` behind the same access
   * rules (recording-route.ts); absent, or answering undefined: no recordings here.
   */
  recordings?: () => RecordingFiles | undefined;
  /** Recording files sent at once (default 4); more get device_busy (429). */
  maxRecordingTransfers?: number;
  /**
   * HTTPS with the device certificate (tool-transport.ts decides when): reloaded on SIGHUP. Absent:
   * plain HTTP; `insecure` says it listens beyond loopback in clear, which the start warns about.
   */
  tls?: { certPath: string; keyPath: string; reloadOnSighup?: boolean };
  insecure?: boolean;
  /** From accept to a finished TLS handshake: a stranger holds a socket no longer without one. Default 10 s. */
  handshakeTimeoutMs?: number;
}

export interface ToolServer {
  readonly host: string;
  readonly port: number;
  readonly scheme: 'http' | 'https';
  /** `http(s)://<host>:<port>/mcp` */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The device tool server: Model Context Protocol over streamable HTTP at `/mcp`, serving every tool
 * of the registry. Stateless: each POST gets a fresh SDK server and transport (the SDK requires it
 * without sessions), which keeps no per-client state on a device and lets any number of hub
 * processes call it. A tool's failure or a bad argument is an MCP error result; an unknown tool or a
 * malformed call is a JSON-RPC error (-32602); nothing a client sends can stop the server. Beyond
 * loopback every caller but a local one needs the device's bearer token (tool-access.ts).
 */
export async function startToolServer(options: ToolServerOptions): Promise<ToolServer> {
  const { tools, logger } = options;
  const host = options.host ?? DEFAULT_TOOL_HOST;
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const info = options.serverInfo ?? { name: 'lookout-device', version: '0.0.0' };
  checkCredential(host, options.token);
  const guard = toolAccessGuard({ host, ...(options.token !== undefined ? { token: options.token } : {}), allowedOrigins: options.allowedOrigins ?? [] });

  // One for every request's Server: the SDK builds an Ajv per Server, about 0.2 ms of device CPU per call.
  const validator = new AjvJsonSchemaValidator();
  const serveRecording = recordingRoute({
    files: options.recordings ?? (() => undefined),
    ...(options.maxRecordingTransfers !== undefined ? { maxTransfers: options.maxRecordingTransfers } : {}),
  });
  const createMcpServer = (): Server => {
    const server = new Server(info, { capabilities: { tools: {} }, jsonSchemaValidator: validator });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.list().map((entry) => mcpToolListing(entry.decl)) }));
    // The SDK's Server wraps a tools/call handler in two more parses of the whole request (and one of
    // the answer, copying each block). checkMcpMessage has checked the envelope before the SDK saw it
    // and the registry checks the arguments against the tool's schema: the handler is set on the
    // protocol layer, which reads only the method here.
    Protocol.prototype.setRequestHandler.call(server, TOOLS_CALL, async (request: z.output<typeof TOOLS_CALL>, extra: { signal: AbortSignal }) => {
      const params = request.params as CheckedToolCall;
      const name = params.name;
      const started = Date.now();
      try {
        const result = await tools.call(name, params.arguments ?? {}, { signal: extra.signal });
        logger.debug({ tool: name, ms: Date.now() - started }, 'tool call');
        // A tool that declares imageContent (get_live_jpeg) also answers its picture as an MCP image block.
        return toolSuccess(result, tools.get(name)?.decl);
      } catch (err) {
        const e = toLookoutError(err);
        // MCP 2025-11-25: an unknown tool is a protocol error (-32602), not a tool's own failure.
        if (e.code === 'tool_unknown') throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`, { code: e.code, tool: name });
        logger.warn({ tool: name, code: e.code, ms: Date.now() - started }, `tool call failed: ${e.message}`);
        return toolFailure(e);
      }
    });
    return server;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Access first: a caller without the credential learns nothing, not even which paths exist.
    const refusal = guard(req);
    if (refusal) return sendJson(res, refusal.status, refusal.error.toBody(), true, refusal.headers);
    const path = (req.url ?? '/').split('?')[0];
    if (path === METRICS_PATH && options.metrics) return sendMetrics(req, res, options.metrics);
    if (path.startsWith(RECORDINGS_PATH)) return serveRecording(req, res, path, (status, body, headers) => sendJson(res, status, body, false, headers));
    if (path !== MCP_PATH) return sendJson(res, 404, new LookoutError('not_found', `no route ${path}; the tool server answers at ${MCP_PATH}`).toBody());
    if (req.method !== 'POST') {
      // Stateless: no standalone SSE stream (GET) and no session to end (DELETE).
      res.setHeader('Allow', 'POST');
      return sendJson(res, 405, jsonRpcError(-32000, 'method not allowed: this stateless server takes POST only'));
    }
    let body: unknown;
    try {
      const raw = await readBody(req, maxBody);
      if (jsonDeeperThan(raw, MAX_REQUEST_JSON_DEPTH)) throw new LookoutError('bad_request', `nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels`);
      body = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      const e = toLookoutError(err);
      if (e.code === 'payload_too_large') return sendJson(res, 413, jsonRpcError(-32600, e.message), true);
      return sendJson(res, 400, jsonRpcError(-32700, `parse error: ${e.message}`));
    }
    const early = checkMcpMessage(body);
    if (early) return sendJson(res, early.status, early.body);
    const server = createMcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      const e = toLookoutError(err);
      logger.error({ err: e, code: e.code }, `tool server request failed: ${e.message}`);
      if (!res.headersSent) sendJson(res, 500, jsonRpcError(-32603, 'internal error'));
      else res.end();
    });
  };
  const tls = options.tls;
  const pair = tls ? await servedPairAtStart(tls.certPath, tls.keyPath) : undefined;
  const http = pair
    ? createHttpsServer({ cert: pair.cert, key: pair.key, ...TOOL_TLS_CONTEXT, handshakeTimeout: options.handshakeTimeoutMs ?? 10_000 }, onRequest)
    : createServer(onRequest);
  http.on('clientError', (_err: Error, socket: Duplex) => socket.destroy());
  // A failed handshake (a scanner, a client that does not trust the certificate) is the client's matter, not an error here.
  if (pair) http.on('tlsClientError', (_err: Error, socket: Duplex) => socket.destroy());

  await listen(http, options.port ?? DEFAULT_TOOL_PORT, host, { name: 'the tool server', key: '--tool-port' });
  const port = boundPort(http, options.port ?? DEFAULT_TOOL_PORT);
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const scheme = pair ? 'https' : 'http';
  const url = `${scheme}://${urlHost}:${port}${MCP_PATH}`;
  const stopReload = pair && tls && tls.reloadOnSighup !== false ? reloadOnSighup(http as ReturnType<typeof createHttpsServer>, tls, pair, logger) : undefined;
  logger.info(
    {
      host,
      port,
      url,
      access: options.token !== undefined ? 'bearer token beyond loopback' : 'loopback only',
      ...(pair ? { fingerprint: pair.fingerprint } : {}),
    },
    'tool server listening',
  );
  if (!pair && options.insecure) {
    logger.warn(
      { host, port },
      `the tool server listens beyond loopback in plain HTTP (--insecure-tool-http): its token and every answer cross the network in clear`,
    );
  }

  return {
    host,
    port,
    scheme,
    url,
    close: () => {
      stopReload?.();
      return closeServer(http);
    },
  };
}

/**
 * A tool server beyond loopback without a credential would let anyone on the camera's network
 * change its settings: refused at start, as the hub refuses --host without --token.
 */
export function checkCredential(host: string, token: string | undefined): void {
  if (token !== undefined && token.length < MIN_TOOL_TOKEN_CHARS) {
    throw new LookoutError('config_invalid', `the tool token must be at least ${MIN_TOOL_TOKEN_CHARS} characters`, {
      details: { key: 'LOOKOUT_TOOL_TOKEN', usage: true },
    });
  }
  if (token === undefined && !isLoopbackHost(host)) {
    throw new LookoutError(
      'config_invalid',
      `--tool-host ${host}: beyond loopback the tool server requires a credential; set LOOKOUT_FLEET_SECRET (the token is derived from it) or LOOKOUT_TOOL_TOKEN in the environment, or listen on 127.0.0.1`,
      { details: { key: '--tool-host', value: host, usage: true } },
    );
  }
}

/** `GET /metrics`: the device's gauges as Prometheus text (GET and HEAD only: nothing to post). */
async function sendMetrics(req: IncomingMessage, res: ServerResponse, metrics: NonNullable<ToolServerOptions['metrics']>): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return sendJson(res, 405, new LookoutError('method_not_allowed', `${req.method ?? ''} ${METRICS_PATH}: GET only`).toBody());
  }
  const { body, contentType } = await metrics();
  res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function sendJson(res: ServerResponse, status: number, body: unknown, closeConnection = false, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(closeConnection ? { connection: 'close' } : {}),
  });
  res.end(text);
}

/**
 * An error the SDK answers as a JSON-RPC error with this code, message and data. Not McpError, whose
 * message carries an "MCP error <code>:" prefix that clients then print twice.
 */
function rpcError(code: number, message: string, data: Record<string, unknown>): Error {
  return Object.assign(new Error(message), { code, data });
}

function jsonRpcError(code: number, message: string): unknown {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}
