import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, ListToolsResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { AgentOptions } from 'node:https';
import { deviceTlsRefusalOf, type DeviceTlsMismatchError } from 'lookout/lib/tls';
import { LookoutError, type ToolCallAnswer } from 'lookout/core';
import { DeviceConnectionError, DeviceTransport } from './device-transport.js';
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

/** Which device to call: its tool server and its id (the credential is the device's own). */
export interface PoolTarget {
  url: string;
  deviceId: string;
  /** Over https: the fingerprint its certificate must have (the registry's tlsFingerprint). A new one makes a new client. */
  tlsFingerprint?: string | null;
}

export interface McpPoolOptions {
  clientInfo: { name: string; version: string };
  /** The bearer token for a device's tool server, or undefined to send none. */
  credential?: (deviceId: string) => string | undefined;
  /**
   * The TLS options of an https device's agent (fleet CA, the device's certificate pinned:
   * deviceTlsOptions), asked when its client is made; throws a LookoutError when the hub cannot
   * verify devices (no fleet CA).
   */
  tls?: (target: PoolTarget) => AgentOptions;
  /** Told the tools a device declares each time its list is read (for metric labels). */
  onToolsListed?: (deviceId: string, tools: Map<string, ToolTraits>) => void;
}

interface PooledClient {
  /** Resolves once initialize answered; connected on a signal and timer of its own, never a caller's. */
  client: Promise<Client>;
  transport: DeviceTransport;
  lastUsed: number;
  /** Calls (and tools/list reads) under way on it: a retired client closes when the last ends. */
  inFlight: number;
  /** Replaced (its connection broke): no new call goes on it. */
  retired: boolean;
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
 * one round trip instead of an initialize handshake and a TCP connection each time.
 *
 * A call's failure is that call's alone: one that times out or whose caller gives up is cancelled
 * (notifications/cancelled; the transport ends that request's exchange, no other) and the client
 * stays, as it does for an error the device answered or an HTTP failure of one request. Only a broken
 * connection replaces the client: a socket failure (refused, reset, cut mid-answer), a session the
 * device no longer knows (404 to a request that carried one: the device restarted), or a refused
 * credential. The replaced client takes no new call and closes once its calls in flight have ended,
 * so replacing it fails none of them. A call that failed on a broken connection is retried once on
 * a fresh one only when the device declares the tool idempotent or read-only (tools/list
 * annotations, read in the background after connecting): the first attempt may have run, and running
 * set_camera_profile twice behind the caller's back is not ours to decide.
 *
 * A call's timeout runs from when it is sent: the wait for the device's call slot
 * (device-call-limiter.ts) and for the client's initialize do not count against it; the initialize
 * has a bound of its own.
 */
export class McpClientPool {
  private readonly clients = new Map<string, PooledClient>();
  /** Every client not closed yet, the retired ones whose calls are still under way too. */
  private readonly open = new Set<PooledClient>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: McpPoolOptions) {
    this.sweeper = setInterval(() => this.sweep(), IDLE_CLOSE_MS / 2);
    this.sweeper.unref();
  }

  /**
   * Calls a tool. Resolves with the MCP result (a tool's own failure is `isError`); rejects with
   * `device_timeout` when the device has not answered `timeoutMs` after the call was sent (or the
   * client did not initialize within it), `device_auth_refused` when the device refuses the
   * credential, `device_unreachable` when the device cannot be spoken to, or an McpError the device
   * answered with.
   */
  async call(target: PoolTarget, tool: string, args: Record<string, unknown>, options: { timeoutMs: number; signal: AbortSignal }): Promise<ToolCallAnswer> {
    const { url } = target;
    // A signal of this call alone: the SDK leaves its abort listener on the signal it is given, and a caller's may live long.
    const own = new AbortController();
    const forward = (): void => own.abort(options.signal.reason);
    if (options.signal.aborted) forward();
    else options.signal.addEventListener('abort', forward, { once: true });
    // The deadline is set when the call is first sent; a retry has what is left of it.
    let deadline: number | undefined;
    const left = (): number => (deadline ??= Date.now() + options.timeoutMs) - Date.now();
    try {
      try {
        return await this.once(target, tool, args, own.signal, options.timeoutMs, left);
      } catch (first) {
        if (!(first instanceof FailedAttempt)) throw first;
        const { entry, err } = first;
        if (!this.isBroken(entry, err) || own.signal.aborted || isAuthRefusal(err) || deviceTlsRefusalOf(err)) throw first;
        if (entry.tools?.get(tool)?.retryable !== true || left() <= 0) throw first;
        return await this.once(target, tool, args, own.signal, options.timeoutMs, left);
      }
    } catch (attempt) {
      const err = attempt instanceof FailedAttempt ? attempt.err : attempt;
      if (isTimeout(err)) {
        throw new LookoutError('device_timeout', `the device at ${url} did not answer ${tool} within ${options.timeoutMs} ms`, {
          cause: err,
          details: { tool, timeout_ms: options.timeoutMs },
        });
      }
      if (options.signal.aborted || err instanceof LookoutError) throw err;
      if (isAuthRefusal(err)) {
        throw new LookoutError(
          'device_auth_refused',
          `the device at ${url} refused the hub's tool credential: the device's token must derive from the hub's fleet secret`,
          {
            cause: err,
            details: { tool, device_id: target.deviceId },
          },
        );
      }
      const refusal = deviceTlsRefusalOf(err);
      if (refusal) throw tlsMismatch(target, refusal, err, tool);
      if (isTransportFailure(err)) {
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
    const own = new AbortController();
    const forward = (): void => own.abort(options.signal.reason);
    if (options.signal.aborted) forward();
    else options.signal.addEventListener('abort', forward, { once: true });
    const entry = this.entry(target, options.timeoutMs);
    entry.inFlight++;
    try {
      const client = await untilAborted(entry.client, own.signal);
      const { tools } = await listTools(client, { signal: own.signal, timeout: options.timeoutMs });
      entry.tools = new Map(tools.map((t) => [t.name, toolTraitsOf(t)]));
      entry.listedAt = Date.now();
      this.options.onToolsListed?.(target.deviceId, entry.tools);
      return tools;
    } catch (err) {
      if (options.signal.aborted) throw err;
      if (this.isBroken(entry, err)) this.retire(target, entry);
      if (isTimeout(err)) {
        throw new LookoutError('device_timeout', `the device at ${target.url} did not list its tools within ${options.timeoutMs} ms`, { cause: err });
      }
      if (isAuthRefusal(err)) throw new LookoutError('device_auth_refused', `the device at ${target.url} refused the hub's tool credential`, { cause: err });
      const refusal = deviceTlsRefusalOf(err);
      if (refusal) throw tlsMismatch(target, refusal, err);
      if (isTransportFailure(err))
        throw new LookoutError('device_unreachable', `the device at ${target.url} cannot be reached: ${describe(err)}`, { cause: err });
      throw err;
    } finally {
      options.signal.removeEventListener('abort', forward);
      this.settle(entry);
    }
  }

  /** What the device's tools/list said about a tool, when it was read. */
  traits(target: PoolTarget, tool: string): ToolTraits | undefined {
    return this.clients.get(keyOf(target))?.tools?.get(tool);
  }

  /**
   * Whether the device's tools/list names the tool: undefined while no list was read. A tool found
   * missing has the list read again in the background at most every RELIST_MS (a plugin may have
   * started since), as a call of it would.
   */
  declares(target: PoolTarget, tool: string): boolean | undefined {
    const entry = this.clients.get(keyOf(target));
    if (!entry?.tools) return undefined;
    if (entry.tools.has(tool)) return true;
    if (Date.now() - entry.listedAt > RELIST_MS) this.relist(target, entry);
    return false;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.clients.clear();
    await Promise.all([...this.open].map((entry) => this.closeEntry(entry)));
  }

  /**
   * One attempt on the pooled client; rejects with a FailedAttempt (the client it ran on, the error).
   * `timeout` gives the call's time left once it is sent (after the initialize).
   */
  private async once(
    target: PoolTarget,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    timeout: () => number,
  ): Promise<ToolCallAnswer> {
    const entry = this.entry(target, timeoutMs);
    entry.inFlight++;
    try {
      const client = await untilAborted(entry.client, signal);
      if (entry.tools && !entry.tools.has(tool) && Date.now() - entry.listedAt > RELIST_MS) this.relist(target, entry);
      // Not client.callTool: that parses the answer with the SDK's zod schema (copying it) and checks
      // structuredContent against the tool's output schema again, which the device's tool registry
      // did before answering (tool_output_invalid otherwise).
      return await client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, DEVICE_TOOL_RESULT, {
        signal,
        timeout: Math.max(1, timeout()),
      });
    } catch (err) {
      if (this.isBroken(entry, err)) this.retire(target, entry);
      throw new FailedAttempt(entry, err);
    } finally {
      this.settle(entry);
    }
  }

  /**
   * Whether a failure says the client's connection is broken (so it must be replaced), as opposed
   * to the failure of one call: a socket failure, a session the device no longer knows, the client
   * closed under the call, or the credential refused.
   */
  private isBroken(entry: PooledClient, err: unknown): boolean {
    if (err instanceof DeviceConnectionError) return true;
    if (err instanceof McpError) return err.code === (ErrorCode.ConnectionClosed as number);
    if (err instanceof StreamableHTTPError) return err.code === 401 || (err.code === 404 && entry.transport.sessionId !== undefined);
    return false;
  }

  private entry(target: PoolTarget, connectTimeoutMs: number): PooledClient {
    const key = keyOf(target);
    const existing = this.clients.get(key);
    if (existing) {
      existing.lastUsed = Date.now();
      return existing;
    }
    const client = new Client(this.options.clientInfo, { jsonSchemaValidator: VALIDATOR });
    const token = this.options.credential?.(target.deviceId);
    // Redirects are not followed: the registry decides which hosts are contacted, not the device.
    const url = new URL(target.url);
    const tls = url.protocol === 'https:' ? this.options.tls?.(target) : undefined;
    const transport = new DeviceTransport(url, { ...(token !== undefined ? { token } : {}), ...(tls ? { tls } : {}) });
    const entry: PooledClient = {
      lastUsed: Date.now(),
      listedAt: 0,
      inFlight: 0,
      retired: false,
      transport,
      client: undefined as unknown as Promise<Client>,
    };
    // Shared by every call that comes meanwhile: no caller's signal may end it for the others.
    entry.client = client.connect(transport, { timeout: connectTimeoutMs }).then(
      () => {
        this.relist(target, entry);
        return client;
      },
      async (err: unknown) => {
        this.retire(target, entry);
        await client.close().catch(() => undefined);
        throw err;
      },
    );
    entry.client.catch(() => undefined);
    this.clients.set(key, entry);
    this.open.add(entry);
    return entry;
  }

  /** Reads tools/list in the background: a failure leaves the tools unknown (then nothing is retried). */
  private relist(target: PoolTarget, entry: PooledClient): void {
    if (entry.listing || entry.retired) return;
    entry.listedAt = Date.now();
    entry.inFlight++;
    entry.listing = entry.client
      .then((client) => listTools(client, { timeout: LIST_TIMEOUT_MS }))
      .then(
        ({ tools }) => {
          entry.tools = new Map(tools.map((t) => [t.name, toolTraitsOf(t)]));
          this.options.onToolsListed?.(target.deviceId, entry.tools);
        },
        (err: unknown) => {
          if (this.isBroken(entry, err)) this.retire(target, entry);
        },
      )
      .finally(() => {
        entry.listing = undefined;
        this.settle(entry);
      });
  }

  /** No new call goes on this client; it closes once its calls in flight have ended. */
  private retire(target: PoolTarget, entry: PooledClient): void {
    const key = keyOf(target);
    if (this.clients.get(key) === entry) this.clients.delete(key);
    if (entry.retired) return;
    entry.retired = true;
    if (entry.inFlight === 0) void this.closeEntry(entry);
  }

  /** A call on `entry` ended. */
  private settle(entry: PooledClient): void {
    entry.inFlight--;
    if (entry.retired && entry.inFlight === 0) void this.closeEntry(entry);
  }

  private async closeEntry(entry: PooledClient): Promise<void> {
    this.open.delete(entry);
    await entry.client
      .then(
        (c) => c.close(),
        () => undefined,
      )
      .catch(() => undefined);
    await entry.transport.close();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.clients) {
      if (entry.inFlight === 0 && now - entry.lastUsed > IDLE_CLOSE_MS) {
        this.clients.delete(key);
        entry.retired = true;
        void this.closeEntry(entry);
      }
    }
  }
}

/** A failed attempt: the client it ran on and why it failed (`err`, what the caller is told about). */
class FailedAttempt extends Error {
  constructor(
    readonly entry: PooledClient,
    readonly err: unknown,
  ) {
    super('a tool call attempt failed', { cause: err });
  }
}

/** The promise, or the signal's reason once it aborts; the listener goes when either settles. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
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
  return `${target.deviceId}\n${target.url}\n${target.tlsFingerprint ?? ''}`;
}

/** A device's certificate the hub refused: device_tls_mismatch (502), saying which check failed; the presented fingerprint is public. */
function tlsMismatch(target: PoolTarget, refusal: DeviceTlsMismatchError, err: unknown, tool?: string): LookoutError {
  return new LookoutError(
    'device_tls_mismatch',
    `the device at ${target.url} presented a certificate the hub refuses for ${target.deviceId}: ${refusal.message}`,
    {
      cause: err,
      details: {
        device_id: target.deviceId,
        reason: refusal.reason,
        expected_fingerprint: target.tlsFingerprint ?? null,
        ...(refusal.presented ? { presented_fingerprint: refusal.presented } : {}),
        ...(tool ? { tool } : {}),
      },
    },
  );
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
