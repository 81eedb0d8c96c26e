/**
 * The hub's MCP transport to device tool servers (hub/plugins/tools-proxy/src/device-transport.ts)
 * against a real HTTP server on 127.0.0.1 that answers as a test decides: JSON and event-stream
 * answers handed on, the session and protocol-version headers kept, answers bounded, failures shaped
 * as the pool tells them apart (StreamableHTTPError with the status, a socket error as the cause),
 * and keep-alive sockets of its own that close with it.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { DeviceCallCancelled, DeviceConnectionError, DeviceTransport } from '../../../../../hub/plugins/tools-proxy/src/device-transport.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

const request = (id: number, method = 'tools/call'): JSONRPCMessage => ({ jsonrpc: '2.0', id, method, params: { name: 'get_thing', arguments: {} } });
const result = (id: number, value: Record<string, unknown> = { ok: true }) => ({ jsonrpc: '2.0', id, result: value });

describe('DeviceTransport', () => {
  let server: Server;
  let url: URL;
  let handler: Handler = () => undefined;
  const seen: { headers: IncomingMessage['headers']; body: string }[] = [];
  let connections = 0;
  let closed = 0;

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ headers: req.headers, body });
        handler(req, body, res);
      });
    });
    server.on('connection', (socket: Socket) => {
      connections++;
      socket.on('close', () => closed++);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A transport whose messages are collected; closed by the test. */
  function open(options: ConstructorParameters<typeof DeviceTransport>[1] = {}): { transport: DeviceTransport; messages: JSONRPCMessage[] } {
    const transport = new DeviceTransport(url, options);
    const messages: JSONRPCMessage[] = [];
    transport.onmessage = (m) => messages.push(m);
    return { transport, messages };
  }

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  it('closes a kept-alive socket idle past idleSocketMs itself, before the device would (no call takes a socket the device is closing)', async () => {
    const { transport } = open({ idleSocketMs: 200 });
    const keepAlive = server.keepAliveTimeout;
    server.keepAliveTimeout = 60_000;
    try {
      handler = (_req, body, res) => json(res, 200, result((JSON.parse(body) as { id: number }).id));
      const before = closed;
      await transport.send(request(41, 'ping'));
      const deadline = Date.now() + 5_000;
      while (closed === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(closed, before + 1, 'the idle socket was closed by the hub, long before the device’s 60 s');
      await transport.send(request(42, 'ping'));
    } finally {
      server.keepAliveTimeout = keepAlive;
      await transport.close();
    }
  });

  it('posts each message as JSON with the bearer token, hands the answer on before send resolves, and sends the session and protocol version once known', async () => {
    const { transport, messages } = open({ token: 't0ken-of-the-device' });
    try {
      handler = (req, body, res) => {
        const m = JSON.parse(body) as { id?: number };
        if (m.id === undefined) {
          res.writeHead(202);
          return res.end();
        }
        json(res, 200, result(m.id), { 'mcp-session-id': 'session-7' });
      };
      seen.length = 0;
      await transport.send(request(1, 'initialize'));
      assert.deepEqual(messages, [result(1)], 'handed on before send resolved');
      assert.equal(transport.sessionId, 'session-7');
      transport.setProtocolVersion('2025-11-25');
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await transport.send(request(2));
      assert.equal(messages.length, 2, 'a notification answered 202 hands nothing on');
      const [first, , third] = seen;
      assert.equal(first.headers.authorization, 'Bearer t0ken-of-the-device');
      assert.equal(first.headers['content-type'], 'application/json');
      assert.match(String(first.headers.accept), /application\/json/);
      assert.match(String(first.headers.accept), /text\/event-stream/);
      assert.equal(first.headers['mcp-session-id'], undefined);
      assert.deepEqual(JSON.parse(first.body), request(1, 'initialize'));
      assert.equal(third.headers['mcp-session-id'], 'session-7');
      assert.equal(third.headers['mcp-protocol-version'], '2025-11-25');
    } finally {
      await transport.close();
    }
  });

  it('reads an answer sent as an event stream, message by message as it arrives', async () => {
    const { transport, messages } = open();
    let end: (() => void) | undefined;
    try {
      handler = (_req, body, res) => {
        const { id } = JSON.parse(body) as { id: number };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1, progressToken: id } })}\n\n`,
        );
        end = () => res.end(`data: ${JSON.stringify(result(id, { done: true }))}\n\n`);
      };
      const sent = transport.send(request(3));
      await waitUntil(() => messages.length === 1);
      assert.equal((messages[0] as { method: string }).method, 'notifications/progress', 'the first event is handed on before the stream ends');
      end!();
      await sent;
      assert.deepEqual(messages[1], result(3, { done: true }));
    } finally {
      await transport.close();
    }
  });

  it('refuses an event stream that ends without the answer, an answer that is not JSON-RPC, and one of another content type', async () => {
    const { transport } = open();
    try {
      handler = (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(': nothing\n\n');
      };
      await assert.rejects(transport.send(request(4)), /ended without the answer to request 4/);
      handler = (_req, _body, res) => json(res, 200, { jsonrpc: '2.0', id: 5, result: 'not an object' });
      await assert.rejects(transport.send(request(5)), /not a JSON-RPC 2.0 message/);
      handler = (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jsonrpc": "2.0", "id": 6, ');
      };
      await assert.rejects(transport.send(request(6)), SyntaxError);
      handler = (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<p>hello</p>');
      };
      await assert.rejects(
        transport.send(request(7)),
        (err: Error) => err instanceof StreamableHTTPError && /Unexpected content type: text\/html/.test(err.message),
      );
    } finally {
      await transport.close();
    }
  });

  it('answers an HTTP failure as a StreamableHTTPError with its status, and follows no redirect', async () => {
    const { transport } = open({ token: 'wrong-token-0000000000' });
    try {
      seen.length = 0;
      handler = (_req, _body, res) => json(res, 401, { error: { code: 'unauthorized', message: 'no' } });
      await assert.rejects(transport.send(request(8)), (err: Error) => err instanceof StreamableHTTPError && err.code === 401);
      handler = (_req, _body, res) => {
        res.writeHead(307, { location: 'http://127.0.0.9/elsewhere' });
        res.end();
      };
      await assert.rejects(
        transport.send(request(9)),
        (err: Error) => err instanceof StreamableHTTPError && err.code === 307 && /not followed/.test(err.message),
      );
      assert.equal(seen.length, 2, 'nothing sent to the redirect target');
    } finally {
      await transport.close();
    }
  });

  it("refuses an answer past the byte bound instead of growing the hub's memory, declared or not", async () => {
    const { transport } = open({ maxBytes: 64 * 1024 });
    try {
      handler = (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(16 * 1024, 0x20);
        let sent = 0;
        const pump = (): void => {
          while (sent < 200 && res.write(chunk)) sent++;
          if (sent < 200) res.once('drain', pump);
          else res.end();
        };
        res.on('close', () => (sent = 200));
        pump();
      };
      await assert.rejects(transport.send(request(10)), /more than 65536 bytes/);
      handler = (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(1024 * 1024) });
        res.write(Buffer.alloc(1024, 0x20));
      };
      await assert.rejects(transport.send(request(11)), /more than 65536 bytes/);
    } finally {
      await transport.close();
    }
  });

  it('gives a socket failure with the socket error as its cause, a connection cut mid-answer too', async () => {
    const refused = new DeviceTransport(new URL('http://127.0.0.1:9/mcp'));
    const err = await refused.send(request(12)).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    await refused.close();
    assert.ok(err instanceof DeviceConnectionError, String(err));
    assert.equal((err.cause as { code?: string }).code, 'ECONNREFUSED');
    const { transport } = open();
    try {
      handler = (req) => req.socket.destroy();
      await assert.rejects(
        transport.send(request(13)),
        (e: Error) => ['ECONNRESET', undefined].includes((e.cause as { code?: string })?.code) && e instanceof DeviceConnectionError,
      );
    } finally {
      await transport.close();
    }
    assert.throws(() => new DeviceTransport(new URL('ftp://127.0.0.1/mcp')), TypeError);
  });

  it('keeps its sockets alive between messages, shares them with no other transport, and closes them with close()', async () => {
    handler = (_req, body, res) => json(res, 200, result((JSON.parse(body) as { id: number }).id));
    const { transport } = open();
    let onclose = 0;
    transport.onclose = () => onclose++;
    const before = connections;
    for (let i = 0; i < 5; i++) await transport.send(request(20 + i));
    assert.equal(connections - before, 1, 'five messages on one socket');
    const other = open().transport;
    await other.send(request(30));
    assert.equal(connections - before, 2, 'another transport opens its own');
    const closedBefore = closed;
    await transport.close();
    await other.close();
    await waitUntil(() => closed >= closedBefore + 2);
    assert.equal(onclose, 1);
    await assert.rejects(transport.send(request(31)), /closed/);
  });

  it('ends the exchange of a cancelled request only, and still sends the notification', async () => {
    const held = new Map<number, ServerResponse>();
    const ended: number[] = [];
    handler = (req, body, res) => {
      const msg = JSON.parse(body) as { id?: number; method: string };
      if (msg.id === undefined) return json(res, 202, {});
      held.set(msg.id, res);
      req.socket.once('close', () => ended.push(msg.id!));
    };
    const { transport, messages } = open();
    try {
      const cancelled = transport.send(request(50)).then(
        () => undefined,
        (e: unknown) => e,
      );
      const kept = transport.send(request(51));
      await waitUntil(() => held.size === 2);
      await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 50, reason: 'timed out' } });
      assert.ok((await cancelled) instanceof DeviceCallCancelled);
      await waitUntil(() => ended.includes(50));
      assert.ok(
        seen.some((s) => s.body.includes('notifications/cancelled')),
        'the notification was sent',
      );
      json(held.get(51)!, 200, result(51));
      await kept;
      assert.deepEqual(
        messages.map((m) => (m as { id?: number }).id),
        [51],
      );
      assert.deepEqual(ended, [50], 'the other request’s connection stayed');
    } finally {
      await transport.close();
    }
  });

  it('ends a notification the device does not answer within its bound, so cancellations to a hung device keep no socket', async () => {
    handler = () => undefined; // never answers
    const { transport } = open({ notificationTimeoutMs: 200 });
    const closedBefore = closed;
    try {
      await assert.rejects(
        transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
        /no answer to a notification within 200 ms/,
      );
      await waitUntil(() => closed >= closedBefore + 1);
    } finally {
      await transport.close();
    }
  });

  it('fails a message in flight when it is closed', async () => {
    handler = () => undefined; // never answers
    const { transport } = open();
    const sent = transport.send(request(40));
    await waitUntil(() => seen.some((s) => s.body.includes('"id":40')));
    await transport.close();
    await assert.rejects(sent, /the transport is closed/);
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
