import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, ListToolsResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { LookoutError } from 'lookout/core';
import { DeviceTransport } from './device-transport.js';
import { DEVICE_TOOL_RESULT } from './device-tool-result.js';
import { toolTraitsOf, type ToolTraits } from './tool-traits.js';

/** One tool as tools/list gives it (MCP 2025-11-25). */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown };
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export interface ToolCallResult {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** Which device to call: its tool server and its id (the credential is the device's own). */
export interface PoolTarget {
  url: string;
  deviceId: string;
}

export interface McpPoolOptions {
  clientInfo: { name: string; version: string };
  /** The bearer token for a device's tool server, or undefined to send none. */
  credential?: (deviceId: string) => string | undefined;
  /** Told the tools a device declares each time its list is read (for metric labels). */
  onToolsListed?: (deviceId: string, tools: Map<string, ToolTraits>) => void;
}

interface PooledClient {
  client: Promise<Client>;
  lastUsed: number;
  /** What tools/list said, once it answered: what the pool may retry. */
  tools?: Map<string, ToolTraits>;
  listedAt: number;
  listing?: Promise<void>;
}

const IDLE_CLOSE_MS = 60_000;
/** A tool missing from the list is looked up again at most this often (a plugin may have started since). */
const RELIST_MS = 30_000;
const LIST_TIMEOUT_MS = 10_000;
/**
 * One JSON Schema validator for every pooled client: the SDK's Client makes an Ajv instance of its
 * own by default (23 KiB each, and a few hundred microseconds to make), for callTool and
 * elicitation, neither of which the pool uses.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

/**
 * MCP clients (the official SDK's Client on streamable HTTP, device-transport.ts) of device tool
 * servers, one per device and URL, kept between calls with their keep-alive sockets, so a call costs
 * one round trip instead of an initialize handshake and a TCP connection each time. A client
 * that failed at the transport level is dropped. A call that failed that way on a reused client (a
 * connection the device had closed) is retried once on a fresh one only when the device declares the
 * tool idempotent or read-only (tools/list annotations, read in the background after connecting):
 * the first attempt may have run, and running set_camera_profile twice behind the caller's back is
 * not ours to decide.
 */
export class McpClientPool {
  private readonly clients = new Map<string, PooledClient>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: McpPoolOptions) {
    this.sweeper = setInterval(() => this.sweep(), IDLE_CLOSE_MS / 2);
    this.sweeper.unref();
  }

  /**
   * Calls a tool. Resolves with the MCP result (a tool's own failure is `isError`); rejects with
   * `device_timeout` past `timeoutMs`, `device_auth_refused` when the device refuses the credential,
   * `device_unreachable` when the device cannot be spoken to, or an McpError the device answered with.
   */
  async call(target: PoolTarget, tool: string, args: Record<string, unknown>, options: { timeoutMs: number; signal: AbortSignal }): Promise<ToolCallResult> {
    const { url } = target;
    const deadline = Date.now() + options.timeoutMs;
    // A signal of this call alone: the SDK leaves its abort listener on the signal it is given, and a caller's may live long.
    const own = new AbortController();
    const forward = (): void => own.abort(options.signal.reason);
    if (options.signal.aborted) forward();
    else options.signal.addEventListener('abort', forward, { once: true });
    try {
      const reused = this.clients.get(keyOf(target));
      try {
        return await this.once(target, tool, args, own.signal, deadline);
      } catch (err) {
        if (!reused || Date.now() >= deadline || options.signal.aborted || !isTransportFailure(err) || isAuthRefusal(err)) throw err;
        if (reused.tools?.get(tool)?.retryable !== true) throw err;
        return await this.once(target, tool, args, own.signal, deadline);
      }
    } catch (err) {
      // The SDK times the call out (McpError RequestTimeout) at the deadline, connect included.
      if (isTimeout(err)) {
        void this.drop(target);
        throw new LookoutError('device_timeout', `the device at ${url} did not answer ${tool} within ${options.timeoutMs} ms`, {
          cause: err,
          details: { tool, timeout_ms: options.timeoutMs },
        });
      }
      if (options.signal.aborted) throw err;
      if (isAuthRefusal(err)) {
        void this.drop(target);
        throw new LookoutError(
          'device_auth_refused',
          `the device at ${url} refused the hub's tool credential: the device's token must derive from the hub's fleet secret`,
          {
            cause: err,
            details: { tool, device_id: target.deviceId },
          },
        );
      }
      if (isTransportFailure(err)) {
        void this.drop(target);
        throw new LookoutError('device_unreachable', `the device at ${url} cannot be reached: ${describe(err)}`, {
          cause: err,
          details: { tool, reason: describe(err) },
        });
      }
      throw err;
    } finally {
      options.signal.removeEventListener('abort', forward);
    }
  }

  /**
   * The device's tools/list as it answers it now (names, descriptions, input schemas, annotations),
   * on the pooled client; failures map as `call`'s do (device_timeout, device_auth_refused, device_unreachable).
   */
  async listTools(target: PoolTarget, options: { timeoutMs: number; signal: AbortSignal }): Promise<ListedTool[]> {
    const signal = AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.signal]);
    try {
      const entry = this.entry(target, signal, options.timeoutMs);
      const { tools } = await listTools(await entry.client, { signal, timeout: options.timeoutMs });
      entry.tools = new Map(tools.map((t) => [t.name, toolTraitsOf(t)]));
      entry.listedAt = Date.now();
      this.options.onToolsListed?.(target.deviceId, entry.tools);
      return tools;
    } catch (err) {
      if (options.signal.aborted) throw err;
      const auth = isAuthRefusal(err);
      if (auth || isTransportFailure(err) || signal.aborted || isTimeout(err)) void this.drop(target);
      if (signal.aborted || isTimeout(err)) {
        throw new LookoutError('device_timeout', `the device at ${target.url} did not list its tools within ${options.timeoutMs} ms`, { cause: err });
      }
      if (auth) throw new LookoutError('device_auth_refused', `the device at ${target.url} refused the hub's tool credential`, { cause: err });
      if (isTransportFailure(err))
        throw new LookoutError('device_unreachable', `the device at ${target.url} cannot be reached: ${describe(err)}`, { cause: err });
      throw err;
    }
  }

  /** What the device's tools/list said about a tool, when it was read. */
  traits(target: PoolTarget, tool: string): ToolTraits | undefined {
    return this.clients.get(keyOf(target))?.tools?.get(tool);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.clients.keys()].map((key) => this.dropKey(key)));
  }

  private async once(target: PoolTarget, tool: string, args: Record<string, unknown>, signal: AbortSignal, deadline: number): Promise<ToolCallResult> {
    const entry = this.entry(target, signal, Math.max(1, deadline - Date.now()));
    const client = await entry.client;
    if (entry.tools && !entry.tools.has(tool) && Date.now() - entry.listedAt > RELIST_MS) this.relist(target, entry);
    try {
      // Not client.callTool: that parses the answer with the SDK's zod schema (copying it) and checks
      // structuredContent against the tool's output schema again, which the device did before answering.
      return await client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, DEVICE_TOOL_RESULT, {
        signal,
        timeout: Math.max(1, deadline - Date.now()),
      });
    } catch (err) {
      if (isTransportFailure(err)) void this.drop(target);
      throw err;
    }
  }

  private entry(target: PoolTarget, signal: AbortSignal, timeout: number): PooledClient {
    const key = keyOf(target);
    const existing = this.clients.get(key);
    if (existing) {
      existing.lastUsed = Date.now();
      return existing;
    }
    const client = new Client(this.options.clientInfo, { jsonSchemaValidator: VALIDATOR });
    const token = this.options.credential?.(target.deviceId);
    // Redirects are not followed: the registry decides which hosts are contacted, not the device.
    const transport = new DeviceTransport(new URL(target.url), token !== undefined ? { token } : {});
    const entry: PooledClient = { lastUsed: Date.now(), listedAt: 0, client: undefined as unknown as Promise<Client> };
    entry.client = client.connect(transport, { signal, timeout }).then(
      () => {
        this.relist(target, entry);
        return client;
      },
      async (err: unknown) => {
        if (this.clients.get(key) === entry) this.clients.delete(key);
        await client.close().catch(() => undefined);
        throw err;
      },
    );
    this.clients.set(key, entry);
    return entry;
  }

  /** Reads tools/list in the background: a failure leaves the tools unknown (then nothing is retried). */
  private relist(target: PoolTarget, entry: PooledClient): void {
    if (entry.listing) return;
    entry.listedAt = Date.now();
    entry.listing = entry.client
      .then((client) => listTools(client, { timeout: LIST_TIMEOUT_MS }))
      .then(
        ({ tools }) => {
          entry.tools = new Map(tools.map((t) => [t.name, toolTraitsOf(t)]));
          this.options.onToolsListed?.(target.deviceId, entry.tools);
        },
        () => undefined,
      )
      .finally(() => (entry.listing = undefined));
  }

  private drop(target: PoolTarget): Promise<void> {
    return this.dropKey(keyOf(target));
  }

  private async dropKey(key: string): Promise<void> {
    const entry = this.clients.get(key);
    if (!entry) return;
    this.clients.delete(key);
    await entry.client
      .then(
        (c) => c.close(),
        () => undefined,
      )
      .catch(() => undefined);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.clients) if (now - entry.lastUsed > IDLE_CLOSE_MS) void this.dropKey(key);
  }
}

/**
 * tools/list without client.listTools, which compiles a JSON Schema validator for every output
 * schema listed, for callTool to check answers with: the pool does not call callTool.
 */
function listTools(client: Client, options: { signal?: AbortSignal; timeout: number }): Promise<{ tools: ListedTool[] }> {
  return client.request({ method: 'tools/list' }, ListToolsResultSchema, options);
}

/** One client per device and URL: the credential belongs to the device, the connection to the URL. */
function keyOf(target: PoolTarget): string {
  return `${target.deviceId}\n${target.url}`;
}

function isTimeout(err: unknown): boolean {
  return err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number);
}

/** The device answered 401: our credential is wrong, and trying again will not make it right. */
export function isAuthRefusal(err: unknown): boolean {
  return err instanceof StreamableHTTPError && err.code === 401;
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
