import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { LookoutError, toLookoutError } from '../../core/src/errors/lookout-error.js';
import type { Logger } from '../../core/src/log/logger.js';
import { readBody } from './read-body.js';
import { boundPort, closeServer, listen } from '../../core/src/net/listen.js';
import { isLoopbackHost, isLoopbackHostHeader } from '../../core/src/net/is-loopback.js';
import { toolInputJsonSchema, toolOutputJsonSchema, type ToolJsonSchema } from '../../core/src/tools/tool-json-schema.js';
import type { ToolRegistry } from '../../core/src/tools/tool-registry.js';
import { toolFailure, toolSuccess } from '../../core/src/tools/tool-result.js';

export const DEFAULT_TOOL_PORT = 8765;
export const DEFAULT_TOOL_HOST = '127.0.0.1';
export const MCP_PATH = '/mcp';
/** Tool arguments are small JSON objects; anything near this size is an attack or a mistake. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface ToolServerOptions {
  tools: ToolRegistry;
  logger: Logger;
  /** 0 picks a free port. Default 8765. */
  port?: number;
  /** Default 127.0.0.1 (development); a device binds its LAN address or 0.0.0.0. */
  host?: string;
  maxBodyBytes?: number;
  /** Reported in the MCP `initialize` answer. */
  serverInfo?: { name: string; version: string };
}

export interface ToolServer {
  readonly host: string;
  readonly port: number;
  /** `http://<host>:<port>/mcp` */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The device tool server: Model Context Protocol over streamable HTTP at `/mcp`, serving every tool
 * of the registry. Stateless: each POST gets a fresh SDK server and transport (the SDK requires it
 * without sessions), which keeps no per-client state on a device and lets any number of hub
 * processes call it. A tool's failure or a bad argument is an MCP error result; nothing a client
 * sends can stop the server.
 */
export async function startToolServer(options: ToolServerOptions): Promise<ToolServer> {
  const { tools, logger } = options;
  const host = options.host ?? DEFAULT_TOOL_HOST;
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const info = options.serverInfo ?? { name: 'lookout-device', version: '0.0.0' };
  const loopbackOnly = isLoopbackHost(host);

  const createMcpServer = (): Server => {
    const server = new Server(info, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.list().map((entry) => {
        const tool: { name: string; description: string; inputSchema: ToolJsonSchema; outputSchema?: ToolJsonSchema } = {
          name: entry.decl.name,
          description: entry.decl.description,
          inputSchema: toolInputJsonSchema(entry.decl),
        };
        const output = toolOutputJsonSchema(entry.decl);
        if (output) tool.outputSchema = output;
        return tool;
      }),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const name = request.params.name;
      const started = Date.now();
      try {
        const result = await tools.call(name, request.params.arguments ?? {}, { signal: extra.signal });
        logger.debug({ tool: name, ms: Date.now() - started }, 'tool call');
        return toolSuccess(result);
      } catch (err) {
        const e = toLookoutError(err);
        logger.warn({ tool: name, code: e.code, ms: Date.now() - started }, `tool call failed: ${e.message}`);
        return toolFailure(e);
      }
    });
    return server;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== MCP_PATH) return sendJson(res, 404, new LookoutError('not_found', `no route ${path}; the tool server answers at ${MCP_PATH}`).toBody());
    // A web page must not reach a tool server on the operator's loopback through DNS rebinding.
    if (loopbackOnly && !isLoopbackHostHeader(req.headers.host)) {
      return sendJson(res, 403, new LookoutError('forbidden', 'this tool server answers only to loopback host names').toBody());
    }
    if (req.method !== 'POST') {
      // Stateless: no standalone SSE stream (GET) and no session to end (DELETE).
      res.setHeader('Allow', 'POST');
      return sendJson(res, 405, jsonRpcError(-32000, 'method not allowed: this stateless server takes POST only'));
    }
    let body: unknown;
    try {
      const raw = await readBody(req, maxBody);
      body = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      const e = toLookoutError(err);
      if (e.code === 'payload_too_large') return sendJson(res, 413, jsonRpcError(-32600, e.message), true);
      return sendJson(res, 400, jsonRpcError(-32700, `parse error: ${e.message}`));
    }
    const server = createMcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const e = toLookoutError(err);
      logger.error({ err: e, code: e.code }, `tool server request failed: ${e.message}`);
      if (!res.headersSent) sendJson(res, 500, jsonRpcError(-32603, 'internal error'));
      else res.end();
    });
  });
  http.on('clientError', (_err, socket) => socket.destroy());

  await listen(http, options.port ?? DEFAULT_TOOL_PORT, host, { name: 'the tool server', key: '--tool-port' });
  const port = boundPort(http, options.port ?? DEFAULT_TOOL_PORT);
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `http://${urlHost}:${port}${MCP_PATH}`;
  logger.info({ host, port, url }, 'tool server listening');

  return {
    host,
    port,
    url,
    close: () => closeServer(http),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, closeConnection = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...(closeConnection ? { connection: 'close' } : {}) });
  res.end(text);
}

function jsonRpcError(code: number, message: string): unknown {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}
