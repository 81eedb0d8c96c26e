import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type AgentOptions as HttpsAgentOptions } from 'node:https';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createParser } from 'eventsource-parser';
import { isObject } from 'lookout/core';

/** The most a device's tool server may send back for one request: far beyond any tool result. */
export const MAX_DEVICE_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * The connection to the device failed under a message (refused, reset, cut before the answer was
 * complete): the transport's sockets, not the device's answer to one call. The pool takes it as a
 * broken connection (mcp-pool.ts).
 */
export class DeviceConnectionError extends Error {
  override readonly name = 'DeviceConnectionError';
}

/** A request the client cancelled (notifications/cancelled): its HTTP exchange was ended on purpose. */
export class DeviceCallCancelled extends Error {
  override readonly name = 'DeviceCallCancelled';
}

export interface DeviceTransportOptions {
  /** Sent as `Authorization: Bearer <token>`; never logged. */
  token?: string;
  maxBytes?: number;
  /**
   * How long a notification (nothing awaits its answer but the 202) may take before its exchange is
   * ended: a request is bounded by its caller's timeout, a notification by nothing else, and a
   * device that hangs would keep the sockets of every cancellation sent to it.
   */
  notificationTimeoutMs?: number;
  /**
   * How long a kept-alive socket may sit idle before the hub closes it: below the device's own
   * keep-alive timeout (Node's 5 s on the device's tool server), so that a call never takes a socket
   * the device is closing at that moment. A one-hour soak met that race 3 times as 502 ECONNRESET.
   */
  idleSocketMs?: number;
  /** For an https URL: the agent's TLS options (the fleet CA and the device's pinned certificate, core's deviceTlsOptions). */
  tls?: HttpsAgentOptions;
}

export const NOTIFICATION_TIMEOUT_MS = 10_000;
export const IDLE_SOCKET_MS = 4_000;

/**
 * The client side of MCP streamable HTTP (2025-11-25) as the hub speaks it to device tool servers,
 * for the SDK's Client: each JSON-RPC message is a POST on keep-alive sockets that belong to this
 * transport alone (closed with it, so a client dropped after a transport failure takes its sockets
 * along and its fresh replacement cannot pick up another dead one); the answer is JSON, or an event
 * stream read as it arrives; `Mcp-Session-Id` and `MCP-Protocol-Version` are kept and sent as the
 * protocol asks. No standalone GET stream is opened: a device's tool server is stateless and sends
 * nothing unasked.
 *
 * Why not the SDK's StreamableHTTPClientTransport: over fetch it cost the hub 0.3 ms of CPU more per
 * call on a device tool call of 1.5 ms (the Headers, Request, Response and web streams of every
 * request, and a zod parse of each message that the SDK's protocol layer repeats), and it gave every
 * request the transport's lifelong abort signal, where fetch leaves a listener until the garbage
 * collector finds the request: 1 500 of them after a few thousand calls, each counted by the next.
 *
 * Failures, as the pool tells them apart (mcp-pool.ts): an HTTP status that is not success is a
 * StreamableHTTPError with that status (401: the credential was refused; a redirect is not followed);
 * a socket failure is a DeviceConnectionError whose cause is the socket's error (ECONNREFUSED,
 * ECONNRESET); an answer past `maxBytes`, not JSON, or not JSON-RPC is an Error. Every one rejects `send`.
 *
 * Cancelling: the SDK sends `notifications/cancelled` when a request times out or its caller gives
 * up. The request's own HTTP exchange is ended then (its socket destroyed, no other request's): a
 * stateless device's tool server stops the tool when its request's connection closes, and knows no
 * request the notification could name. The notification is still sent, for a server with sessions.
 */
export class DeviceTransport implements Transport {
  sessionId?: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly agent: HttpAgent;
  private readonly secure: boolean;
  private readonly maxBytes: number;
  private readonly notificationTimeoutMs: number;
  private readonly headers: Record<string, string>;
  private readonly inFlight = new Set<ClientRequest>();
  /** Requests awaiting their answer, by JSON-RPC id: what a cancellation ends. */
  private readonly awaiting = new Map<string | number, ClientRequest>();
  private closed = false;

  constructor(
    private readonly url: URL,
    options: DeviceTransportOptions = {},
  ) {
    this.secure = url.protocol === 'https:';
    if (!this.secure && url.protocol !== 'http:') throw new TypeError(`a device tool server is reached over http or https, not ${url.protocol}`);
    // Node's agent destroys a free socket when it times out; a socket in use only emits 'timeout', which nothing here acts on.
    const agentOptions = { keepAlive: true, scheduling: 'lifo' as const, timeout: options.idleSocketMs ?? IDLE_SOCKET_MS };
    // One keep-alive agent per transport, as over http: TLS sessions are resumed on it as well.
    this.agent = this.secure ? new HttpsAgent({ ...options.tls, ...agentOptions }) : new HttpAgent(agentOptions);
    this.maxBytes = options.maxBytes ?? MAX_DEVICE_RESPONSE_BYTES;
    this.notificationTimeoutMs = options.notificationTimeoutMs ?? NOTIFICATION_TIMEOUT_MS;
    this.headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (options.token !== undefined) this.headers.authorization = `Bearer ${options.token}`;
  }

  start(): Promise<void> {
    return this.closed ? Promise.reject(new Error('the transport is closed')) : Promise.resolve();
  }

  setProtocolVersion(version: string): void {
    this.headers['mcp-protocol-version'] = version;
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the transport is closed'));
    const body = JSON.stringify(message);
    const awaited = 'method' in message && 'id' in message ? message.id : undefined;
    if ('method' in message && message.method === 'notifications/cancelled') this.cancel(message.params?.requestId);
    return new Promise<void>((resolve, reject) => {
      let done = false;
      const finish = (err?: Error): void => {
        if (done) return;
        done = true;
        this.inFlight.delete(req);
        if (awaited !== undefined && this.awaiting.get(awaited) === req) this.awaiting.delete(awaited);
        if (err) reject(err);
        else resolve();
      };
      const headers: Record<string, string> = { ...this.headers, 'content-length': String(Buffer.byteLength(body)) };
      if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
      const req = (this.secure ? httpsRequest : httpRequest)(this.url, { method: 'POST', headers, agent: this.agent });
      this.inFlight.add(req);
      if (awaited !== undefined) this.awaiting.set(awaited, req);
      req.on('error', (err) => finish(this.failure(err)));
      if (awaited === undefined) {
        const timer = setTimeout(
          () => req.destroy(new Error(`no answer to a notification within ${this.notificationTimeoutMs} ms`)),
          this.notificationTimeoutMs,
        );
        timer.unref();
        req.once('close', () => clearTimeout(timer));
      }
      req.on('response', (res) => this.answer(res, awaited, finish));
      req.end(body);
    });
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const req of this.inFlight) req.destroy(new Error('the transport is closed'));
    this.inFlight.clear();
    this.awaiting.clear();
    this.agent.destroy();
    this.onclose?.();
    return Promise.resolve();
  }

  /** Reads one answer to its end and hands its messages on; `awaited` is the id of the request it answers, if any. */
  private answer(res: IncomingMessage, awaited: string | number | undefined, finish: (err?: Error) => void): void {
    const status = res.statusCode ?? 0;
    const session = res.headers['mcp-session-id'];
    if (typeof session === 'string' && session.length > 0) this.sessionId = session;
    if (Number(res.headers['content-length']) > this.maxBytes) {
      res.destroy();
      return finish(tooLarge(this.maxBytes));
    }
    const type = mediaType(res.headers['content-type']);
    let seen = 0;
    const counted = (bytes: number): boolean => {
      seen += bytes;
      if (seen <= this.maxBytes) return true;
      res.destroy();
      finish(tooLarge(this.maxBytes));
      return false;
    };
    res.on('error', (err) => finish(this.failure(err)));
    res.on('close', () => {
      if (!res.complete) finish(this.failure(new Error('the device closed the connection before its answer was complete')));
    });
    if (status >= 200 && status < 300 && type === 'text/event-stream') return this.stream(res, awaited, counted, finish);
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => {
      if (counted(chunk.length)) chunks.push(chunk);
    });
    res.on('end', () => {
      const text = Buffer.concat(chunks, seen).toString('utf8');
      if (status >= 300 && status < 400) {
        return finish(new StreamableHTTPError(status, `Error POSTing to endpoint: redirect to ${res.headers.location ?? '(no location)'} not followed`));
      }
      if (status < 200 || status >= 300) return finish(new StreamableHTTPError(status, `Error POSTing to endpoint: ${text}`));
      // Notifications and responses we sent are accepted with 202 and no body.
      if (status === 202 || awaited === undefined) return finish();
      if (type !== 'application/json') return finish(new StreamableHTTPError(-1, `Unexpected content type: ${res.headers['content-type'] ?? '(none)'}`));
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        return finish(err as Error);
      }
      const messages = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
      const bad = messages.find((m) => !isJsonRpcMessage(m));
      if (bad !== undefined) return finish(notJsonRpc(bad));
      // Handed on before send resolves, as the SDK's transport does.
      for (const m of messages) this.onmessage?.(m as JSONRPCMessage);
      finish();
    });
  }

  /** An event stream answering a request: each message event handed on as it arrives. */
  private stream(res: IncomingMessage, awaited: string | number | undefined, counted: (bytes: number) => boolean, finish: (err?: Error) => void): void {
    let answered = false;
    const parser = createParser({
      onEvent: (event) => {
        if (event.event !== undefined && event.event !== 'message') return;
        let message: unknown;
        try {
          message = JSON.parse(event.data);
        } catch (err) {
          res.destroy();
          return finish(err as Error);
        }
        if (!isJsonRpcMessage(message)) {
          res.destroy();
          return finish(notJsonRpc(message));
        }
        if ('id' in message && message.id === awaited && !('method' in message)) answered = true;
        this.onmessage?.(message);
      },
    });
    res.setEncoding('utf8');
    res.on('data', (text: string) => {
      if (counted(Buffer.byteLength(text))) parser.feed(text);
    });
    res.on('end', () =>
      finish(answered || awaited === undefined ? undefined : new Error(`the device's event stream ended without the answer to request ${String(awaited)}`)),
    );
  }

  /** Ends the HTTP exchange of a request whose answer is no longer awaited; its socket goes with it, no other. */
  private cancel(requestId: unknown): void {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const req = this.awaiting.get(requestId);
    if (!req) return;
    this.awaiting.delete(requestId);
    req.destroy(new DeviceCallCancelled(`request ${requestId} was cancelled`));
  }

  private failure(err: Error): Error {
    if (err instanceof DeviceCallCancelled) return err;
    if (this.closed) return new Error('the transport is closed', { cause: err });
    return new DeviceConnectionError(`${this.url.host}: ${err.message}`, { cause: err });
  }
}

/** The shape every JSON-RPC 2.0 message has (request, notification, result or error); the SDK's protocol layer checks the rest. */
function isJsonRpcMessage(m: unknown): m is JSONRPCMessage {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
  const o = m as Record<string, unknown>;
  if (o.jsonrpc !== '2.0') return false;
  if (typeof o.method === 'string') return true;
  const error = o.error as Record<string, unknown> | undefined;
  if (isObject(error)) return typeof error.code === 'number' && typeof error.message === 'string';
  return 'id' in o && isObject(o.result);
}

/** `application/json; charset=utf-8` → `application/json`. */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0].trim().toLowerCase();
}

function notJsonRpc(m: unknown): Error {
  return new Error(`the device answered something that is not a JSON-RPC 2.0 message: ${JSON.stringify(m)?.slice(0, 200)}`);
}

function tooLarge(maxBytes: number): Error {
  return new Error(`the device sent more than ${maxBytes} bytes in one answer`);
}
