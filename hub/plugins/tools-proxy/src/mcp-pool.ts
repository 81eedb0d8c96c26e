import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { LookoutError } from 'lookout/core';

export interface ToolCallResult {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

interface PooledClient {
  client: Promise<Client>;
  lastUsed: number;
}

const IDLE_CLOSE_MS = 60_000;

/**
 * MCP clients (official SDK, streamable HTTP) of device tool servers, one per URL, kept between
 * calls so a call costs one round trip instead of an initialize handshake each time. A client
 * that failed at the transport level is dropped; a call on a reused client that fails that way
 * (the device restarted and forgot the session) is retried once on a fresh one.
 */
export class McpClientPool {
  private readonly clients = new Map<string, PooledClient>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clientInfo: { name: string; version: string }) {
    this.sweeper = setInterval(() => this.sweep(), IDLE_CLOSE_MS / 2);
    this.sweeper.unref();
  }

  /**
   * Calls a tool. Resolves with the MCP result (a tool's own failure is `isError`); rejects with
   * `device_timeout` past `timeoutMs`, `device_unreachable` when the device cannot be spoken to,
   * or an McpError the device answered with.
   */
  async call(url: string, tool: string, args: Record<string, unknown>, options: { timeoutMs: number; signal: AbortSignal }): Promise<ToolCallResult> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error('deadline')), options.timeoutMs);
    const signal = AbortSignal.any([deadline.signal, options.signal]);
    const started = Date.now();
    try {
      const reused = this.clients.has(url);
      try {
        return await this.once(url, tool, args, signal, options.timeoutMs);
      } catch (err) {
        if (!reused || deadline.signal.aborted || options.signal.aborted || !isTransportFailure(err)) throw err;
        return await this.once(url, tool, args, signal, Math.max(1, options.timeoutMs - (Date.now() - started)));
      }
    } catch (err) {
      if (deadline.signal.aborted || isTimeout(err)) {
        void this.drop(url);
        throw new LookoutError('device_timeout', `the device at ${url} did not answer ${tool} within ${options.timeoutMs} ms`, {
          cause: err,
          details: { tool, timeout_ms: options.timeoutMs },
        });
      }
      if (options.signal.aborted) throw err;
      if (isTransportFailure(err)) {
        void this.drop(url);
        throw new LookoutError('device_unreachable', `the device at ${url} cannot be reached: ${describe(err)}`, {
          cause: err,
          details: { tool, reason: describe(err) },
        });
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.clients.keys()];
    await Promise.all(all.map((url) => this.drop(url)));
  }

  private async once(url: string, tool: string, args: Record<string, unknown>, signal: AbortSignal, timeout: number): Promise<ToolCallResult> {
    const client = await this.client(url, signal, timeout);
    try {
      return await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout });
    } catch (err) {
      if (isTransportFailure(err)) void this.drop(url);
      throw err;
    }
  }

  private client(url: string, signal: AbortSignal, timeout: number): Promise<Client> {
    const existing = this.clients.get(url);
    if (existing) {
      existing.lastUsed = Date.now();
      return existing.client;
    }
    const client = new Client(this.clientInfo);
    // Redirects are refused: the registry decides which hosts are contacted, not the device.
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { redirect: 'error' } });
    const connecting = client.connect(transport, { signal, timeout }).then(
      () => client,
      async (err: unknown) => {
        if (this.clients.get(url)?.client === connecting) this.clients.delete(url);
        await client.close().catch(() => undefined);
        throw err;
      },
    );
    this.clients.set(url, { client: connecting, lastUsed: Date.now() });
    return connecting;
  }

  private async drop(url: string): Promise<void> {
    const entry = this.clients.get(url);
    if (!entry) return;
    this.clients.delete(url);
    await entry.client
      .then(
        (c) => c.close(),
        () => undefined,
      )
      .catch(() => undefined);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [url, entry] of this.clients) if (now - entry.lastUsed > IDLE_CLOSE_MS) void this.drop(url);
  }
}

function isTimeout(err: unknown): boolean {
  return err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number);
}

/** The device was not spoken to (refused, reset, no route, HTTP failure), as opposed to an MCP answer. */
export function isTransportFailure(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return true;
  if (err instanceof McpError) return err.code === (ErrorCode.ConnectionClosed as number);
  return err instanceof Error;
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  if (err instanceof StreamableHTTPError) return `HTTP ${err.code ?? '?'}: ${err.message}`;
  return (err as Error).message ?? String(err);
}
