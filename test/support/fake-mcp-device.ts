import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * A device tool server reduced to what the hub's side needs to be tested against: MCP over
 * streamable HTTP (initialize, tools/list with annotations, tools/call) on 127.0.0.1, where a test
 * decides how each call goes (answer, fail after running, hold until released, refuse the credential)
 * and reads what reached it (calls per tool, the most in flight, Authorization headers).
 */
export interface FakeTool {
  name: string;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean };
}

export interface FakeMcpDevice {
  readonly url: string;
  readonly port: number;
  /** tools/call requests that reached a tool, per tool name. */
  calls(tool: string): number;
  /** tools/call requests per tool name, for a tool the device has or not. */
  asked(tool: string): number;
  /** tools/list requests answered. */
  readonly lists: number;
  /** initialize requests answered (one per client the hub opened). */
  readonly initializes: number;
  /** The most tools/call requests in flight at once. */
  readonly peak: number;
  /** Authorization headers seen, in order. */
  readonly authorizations: (string | undefined)[];
  /** The next call of `tool` runs (is counted), then its connection is cut before any answer. */
  cutAfterRunning(tool: string): void;
  /** Calls of `tool` wait until `releaseHeld` is called. */
  hold(tool: string): void;
  releaseHeld(): void;
  /** With `sessions`: every session it gave is forgotten (a restart), so requests that name one get 404. */
  forgetSessions(): void;
  /** Requests without `Authorization: Bearer <token>` get 401 (undefined: no check). */
  requireToken(token: string | undefined): void;
  close(): Promise<void>;
}

export async function startFakeMcpDevice(
  tools: FakeTool[],
  options: { unknownToolAs?: 'rpc-error' | 'error-result'; sessions?: boolean } = {},
): Promise<FakeMcpDevice> {
  const counts = new Map<string, number>();
  const asked = new Map<string, number>();
  const cut = new Set<string>();
  const held = new Set<string>();
  let waiting: (() => void)[] = [];
  let inFlight = 0;
  let peak = 0;
  let lists = 0;
  let initializes = 0;
  let token: string | undefined;
  /** Sessions given by initialize (with `sessions`), until forgotten. */
  const sessions = new Set<string>();
  const authorizations: (string | undefined)[] = [];

  const answer = (res: ServerResponse, status: number, body?: unknown): void => {
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    authorizations.push(req.headers.authorization);
    if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) return answer(res, 401, { error: { code: 'unauthorized', message: 'no' } });
    if (req.method !== 'POST') return answer(res, 405, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'POST only' } });
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    const msg = JSON.parse(Buffer.concat(chunks).toString()) as { id?: number | string; method: string; params?: Record<string, unknown> };
    const session = req.headers['mcp-session-id'];
    if (options.sessions && msg.method !== 'initialize' && (typeof session !== 'string' || !sessions.has(session))) {
      return answer(res, 404, { jsonrpc: '2.0', id: msg.id ?? null, error: { code: -32001, message: 'Session not found' } });
    }
    if (msg.id === undefined) return answer(res, 202);
    const reply = (result: unknown) => answer(res, 200, { jsonrpc: '2.0', id: msg.id, result });
    switch (msg.method) {
      case 'initialize':
        initializes++;
        if (options.sessions) {
          const id = `session-${initializes}`;
          sessions.add(id);
          res.setHeader('mcp-session-id', id);
        }
        return reply({ protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fake-device', version: '1.0.0' } });
      case 'tools/list':
        lists++;
        return reply({
          tools: tools.map((t) => ({ name: t.name, inputSchema: { type: 'object' }, ...(t.annotations ? { annotations: t.annotations } : {}) })),
        });
      case 'tools/call': {
        const name = String(msg.params?.name);
        asked.set(name, (asked.get(name) ?? 0) + 1);
        if (!tools.some((t) => t.name === name)) {
          if (options.unknownToolAs === 'error-result') {
            return reply({ content: [{ type: 'text', text: `no tool named "${name}"` }], isError: true, _meta: { 'lookout/error': { code: 'tool_unknown' } } });
          }
          return answer(res, 200, {
            jsonrpc: '2.0',
            id: msg.id,
            error: { code: -32602, message: `Unknown tool: ${name}`, data: { code: 'tool_unknown', tool: name } },
          });
        }
        counts.set(name, (counts.get(name) ?? 0) + 1);
        inFlight++;
        peak = Math.max(peak, inFlight);
        try {
          if (held.has(name)) await new Promise<void>((resolve) => waiting.push(resolve));
          if (cut.delete(name)) {
            req.socket.destroy();
            return;
          }
          return reply({
            content: [{ type: 'text', text: JSON.stringify({ tool: name, n: counts.get(name) }) }],
            structuredContent: { tool: name, n: counts.get(name) },
          });
        } finally {
          inFlight--;
        }
      }
      default:
        return answer(res, 200, { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    calls: (tool) => counts.get(tool) ?? 0,
    asked: (tool) => asked.get(tool) ?? 0,
    get lists() {
      return lists;
    },
    get initializes() {
      return initializes;
    },
    get peak() {
      return peak;
    },
    authorizations,
    cutAfterRunning: (tool) => cut.add(tool),
    hold: (tool) => held.add(tool),
    releaseHeld: () => {
      held.clear();
      const all = waiting;
      waiting = [];
      for (const release of all) release();
    },
    forgetSessions: () => sessions.clear(),
    requireToken: (t) => (token = t),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
