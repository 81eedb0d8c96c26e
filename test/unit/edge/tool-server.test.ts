import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { LookoutError } from '../../../core/src/errors/lookout-error.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { ToolRegistry } from '../../../core/src/tools/tool-registry.js';
import { startToolServer, type ToolServer } from '../../../edge/src/tool-server.js';
import { TOOL_ERROR_META_KEY, toolOutcomeOf, type ToolCallAnswer } from '../../../core/src/tools/tool-result.js';

const logger = createLogger({ level: 'silent' });

function registry(): ToolRegistry {
  const tools = new ToolRegistry();
  tools.declare('demo', {
    name: 'add',
    description: 'adds two integers',
    input: z.object({ a: z.number().int(), b: z.number().int().default(1) }),
    output: z.object({ sum: z.number().int() }),
  });
  tools.register('demo', 'add', ({ a, b }: { a: number; b: number }) => ({ sum: a + b }));
  tools.declare('demo', { name: 'explode', description: 'always fails', input: z.object({}) });
  tools.register('demo', 'explode', () => {
    throw new Error('boom');
  });
  tools.declare('demo', { name: 'refuse', description: 'fails with a code', input: z.object({}) });
  tools.register('demo', 'refuse', () => {
    throw new LookoutError('forbidden', 'not today', { details: { password: 'hunter2' } });
  });
  tools.declare('demo', { name: 'list_things', description: 'returns an array', input: z.object({}), readOnly: true });
  tools.register('demo', 'list_things', () => [1, 2, 3]);
  tools.declare('demo', { name: 'reset_counter', description: 'sets a counter to zero', input: z.object({}), idempotent: true });
  tools.register('demo', 'reset_counter', () => ({ counter: 0 }));
  return tools;
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

function post(
  url: string,
  body: Buffer | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString(), headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('tool server (MCP over streamable HTTP)', () => {
  let server: ToolServer;
  let client: Client;

  before(async () => {
    server = await startToolServer({ tools: registry(), logger, port: 0, maxBodyBytes: 4096 });
    client = await connect(server.url);
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('listens on a free port on 127.0.0.1 and serves /mcp', () => {
    assert.ok(server.port > 0);
    assert.equal(server.url, `http://127.0.0.1:${server.port}/mcp`);
  });

  it('lists every tool with its input schema as JSON Schema', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['add', 'explode', 'list_things', 'refuse', 'reset_counter']);
    const add = tools.find((t) => t.name === 'add')!;
    assert.equal(add.description, 'adds two integers');
    assert.equal(add.inputSchema.type, 'object');
    assert.deepEqual(add.inputSchema.required, ['a']);
    assert.equal((add.inputSchema.properties as Record<string, { type: string }>).a.type, 'integer');
    assert.equal(add.outputSchema?.type, 'object');
  });

  it('returns the structured JSON and a text copy', async () => {
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.structuredContent, { sum: 5 });
    assert.deepEqual(JSON.parse((result.content as { text: string }[])[0].text), { sum: 5 });
  });

  it('answers a non-object result as its JSON in the text block, without wrapping it in structuredContent', async () => {
    const result = await client.callTool({ name: 'list_things', arguments: {} });
    assert.equal(result.structuredContent, undefined, 'MCP wants an object there: a list is not put in one');
    assert.deepEqual(result.content, [{ type: 'text', text: '[1,2,3]' }]);
    // The hub reads it with the same module the device wrote it with.
    assert.deepEqual(toolOutcomeOf(result as ToolCallAnswer), { status: 'ok', result: [1, 2, 3] });
  });

  it('answers a bad argument with an MCP error result and stays up', async () => {
    const result = await client.callTool({ name: 'add', arguments: { a: 'two' } });
    assert.equal(result.isError, true);
    assert.match((result.content as { text: string }[])[0].text, /invalid arguments for "add"/);
    assert.equal((result._meta?.[TOOL_ERROR_META_KEY] as { code: string }).code, 'tool_arguments_invalid');
    const again = await client.callTool({ name: 'add', arguments: { a: 1 } });
    assert.deepEqual(again.structuredContent, { sum: 2 });
  });

  it('answers a failing tool with an error result naming the tool', async () => {
    const result = await client.callTool({ name: 'explode', arguments: {} });
    assert.equal(result.isError, true);
    assert.match((result.content as { text: string }[])[0].text, /tool "explode" failed: boom/);
  });

  it('keeps a coded failure and removes secrets from its details', async () => {
    const result = await client.callTool({ name: 'refuse', arguments: {} });
    assert.equal(result.isError, true);
    const error = result._meta?.[TOOL_ERROR_META_KEY] as { code: string; details: { password: string } };
    assert.equal(error.code, 'forbidden');
    assert.notEqual(error.details.password, 'hunter2');
  });

  it('publishes whether each tool is read-only or idempotent as MCP annotations (default: neither)', async () => {
    const { tools } = await client.listTools();
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    assert.deepEqual(hints.list_things, { readOnlyHint: true, idempotentHint: true });
    assert.deepEqual(hints.reset_counter, { readOnlyHint: false, idempotentHint: true });
    assert.deepEqual(hints.add, { readOnlyHint: false, idempotentHint: false });
  });

  it('answers an unknown tool with a JSON-RPC error -32602 (MCP 2025-11-25), not a result', async () => {
    await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), (err: McpError) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32602);
      assert.match(err.message, /Unknown tool: nope$/);
      assert.doesNotMatch(err.message, /MCP error -32602: MCP error/);
      assert.deepEqual(err.data, { code: 'tool_unknown', tool: 'nope' });
      return true;
    });
  });

  it('answers a malformed tools/call with -32602 naming each bad field, not -32603 with a schema dump', async () => {
    const res = await post(server.url, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { arguments: 5 } }));
    const answer = JSON.parse(res.text) as { id: number; error: { code: number; message: string } };
    assert.equal(answer.id, 7);
    assert.equal(answer.error.code, -32602);
    assert.match(answer.error.message, /params\.name must name a tool \(a non-empty string\), not missing/);
    assert.match(answer.error.message, /params\.arguments must be an object, not a number/);
    assert.doesNotMatch(answer.error.message, /[[{]/, 'no raw dump');
    const noParams = JSON.parse((await post(server.url, JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call' }))).text) as { error: { code: number } };
    assert.equal(noParams.error.code, -32602);
  });

  it('refuses JSON-RPC batches', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 1 } } },
    ];
    const res = await post(server.url, JSON.stringify(batch));
    assert.equal(res.status, 400);
    assert.equal((JSON.parse(res.text) as { error: { code: number } }).error.code, -32600);
  });

  it('answers 403 to a request from a browser origin it does not allow (MCP: servers MUST validate Origin)', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    for (const origin of [
      'http://evil.example',
      'null',
      'http://127.0.0.1.evil.example',
      'http://localhost.evil.example:8765',
      'file://',
      'ws://127.0.0.1:80',
    ]) {
      const res = await post(server.url, list, { origin });
      assert.equal(res.status, 403, origin);
      assert.equal((JSON.parse(res.text) as { error: { code: string } }).error.code, 'forbidden');
      assert.doesNotMatch(res.text, /list_things/);
    }
  });

  it('on loopback, serves loopback origins with any port (MCP transports: a local server accepts localhost, 127.0.0.1 and [::1])', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const port = server.port;
    for (const origin of [`http://127.0.0.1:${port}`, 'http://localhost:6274', 'https://[::1]:9000', 'http://127.0.0.1', 'HTTP://LOCALHOST:3000']) {
      const res = await post(server.url, list, { origin, host: `127.0.0.1:${port}` });
      assert.equal(res.status, 200, origin);
      assert.match(res.text, /list_things/);
    }
  });

  it('refuses an oversized body with 413', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: { a: 1, pad: 'x'.repeat(10_000) } } });
    const res = await post(server.url, big);
    assert.equal(res.status, 413);
    assert.match(res.text, /exceeds 4096 bytes/);
  });

  it('refuses malformed JSON with a parse error', async () => {
    const res = await post(server.url, '{not json');
    assert.equal(res.status, 400);
    assert.equal(JSON.parse(res.text).error.code, -32700);
  });

  it('refuses a foreign Host header on a loopback server (DNS rebinding)', async () => {
    const res = await post(server.url, '{}', { host: 'evil.example:80' });
    assert.equal(res.status, 403);
  });

  it('refuses a rebinding name that only starts like a loopback address', async () => {
    // An attacker's DNS name such as 127.0.0.1.evil.example can resolve to 127.0.0.1.
    for (const host of ['127.0.0.1.evil.example', '127.evil.example:80', 'localhost.evil.example']) {
      const res = await post(server.url, '{}', { host });
      assert.equal(res.status, 403, host);
    }
  });

  it('accepts the loopback names themselves', async () => {
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, '127.0.0.1']) {
      const res = await post(server.url, '{}', { host });
      assert.notEqual(res.status, 403, host);
    }
  });

  it('answers other paths with 404', async () => {
    const res = await post(server.url.replace('/mcp', '/other'), '{}');
    assert.equal(res.status, 404);
  });

  it('serves many clients one after another (stateless)', async () => {
    for (let i = 0; i < 3; i++) {
      const c = await connect(server.url);
      const result = await c.callTool({ name: 'add', arguments: { a: i } });
      assert.deepEqual(result.structuredContent, { sum: i + 1 });
      await c.close();
    }
  });
});

describe('tool server: results checked against the declared output schema', () => {
  let server: ToolServer;
  let client: Client;
  /** What the plugin's handler answers next. */
  let answer: unknown;

  before(async () => {
    const tools = new ToolRegistry();
    tools.declare('camera', {
      name: 'get_stream',
      description: 'the stream settings',
      input: z.object({}),
      output: z.object({ codec: z.string(), profile: z.object({ fps: z.number().int(), width: z.number().int() }) }).loose(),
    });
    tools.register('camera', 'get_stream', () => answer);
    server = await startToolServer({ tools, logger, port: 0 });
    client = await connect(server.url);
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('answers a result of the declared shape as the handler gave it, extra fields included', async () => {
    answer = { codec: 'h264', profile: { fps: 10, width: 1280 }, note: 'kept' };
    const result = await client.callTool({ name: 'get_stream', arguments: {} });
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.structuredContent, answer);
    assert.equal((result.content as { text: string }[])[0].text, JSON.stringify(answer));
  });

  it('a plugin answering the wrong shape gets tool_output_invalid naming the field, not a result that breaks its clients', async () => {
    answer = { codec: 'h264', profile: { fps: 'ten', width: 1280 } };
    const result = await client.callTool({ name: 'get_stream', arguments: {} });
    assert.equal(result.isError, true);
    const text = (result.content as { text: string }[])[0].text;
    assert.match(text, /tool "get_stream" of plugin "camera" answered a result its output schema refuses, at profile\.fps/);
    const error = result._meta?.[TOOL_ERROR_META_KEY] as { code: string; details: { tool: string; field: string; issues: { path: unknown[] }[] } };
    assert.equal(error.code, 'tool_output_invalid');
    assert.equal(error.details.tool, 'get_stream');
    assert.equal(error.details.field, 'profile.fps');
    assert.deepEqual(error.details.issues[0].path, ['profile', 'fps']);
    assert.deepEqual(toolOutcomeOf(result as ToolCallAnswer), { status: 'error', error: text, code: 'tool_output_invalid' });
    answer = undefined;
    const nothing = await client.callTool({ name: 'get_stream', arguments: {} });
    assert.equal((nothing._meta?.[TOOL_ERROR_META_KEY] as { details: { field: string } }).details.field, '(the result)');
    answer = { codec: 'h265', profile: { fps: 5, width: 640 } };
    assert.deepEqual((await client.callTool({ name: 'get_stream', arguments: {} })).structuredContent, answer, 'the server stays up');
  });
});

describe('tool server start', () => {
  it('refuses a port in use with a clear error', async () => {
    const first = await startToolServer({ tools: registry(), logger, port: 0 });
    try {
      await assert.rejects(startToolServer({ tools: registry(), logger, port: first.port }), (err: LookoutError) => {
        assert.equal(err.code, 'config_invalid');
        assert.match(err.message, /cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
        return true;
      });
    } finally {
      await first.close();
    }
  });
});

describe('tool server origins and credentials', () => {
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

  it('serves an allowed browser origin', async () => {
    const server = await startToolServer({ tools: registry(), logger, port: 0, allowedOrigins: ['https://console.example'] });
    try {
      assert.equal((await post(server.url, list, { origin: 'https://console.example' })).status, 200);
      assert.equal((await post(server.url, list, { origin: 'https://console.example:8443' })).status, 403);
    } finally {
      await server.close();
    }
  });

  it('with a token: a local agent without Authorization works; a wrong or malformed token is 401 before any tool runs', async () => {
    let ran = 0;
    const tools = registry();
    tools.declare('demo', { name: 'count', description: 'counts its calls', input: z.object({}) });
    tools.register('demo', 'count', () => ({ ran: ++ran }));
    const token = 'a-device-tool-token-0123456789';
    const server = await startToolServer({ tools, logger, port: 0, token });
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'count', arguments: {} } });
    try {
      assert.equal((await post(server.url, call)).status, 200, 'loopback peer, loopback name, no header');
      assert.equal(ran, 1);
      for (const authorization of ['Bearer wrong-token-0123456789', `Bearer ${token}x`, `Basic ${token}`, 'Bearer', `Bearer ${token} extra`]) {
        const res = await post(server.url, call, { authorization });
        assert.equal(res.status, 401, authorization);
        assert.equal((JSON.parse(res.text) as { error: { code: string } }).error.code, 'unauthorized');
        assert.match(String(res.headers['www-authenticate']), /^Bearer /);
        assert.doesNotMatch(res.text, new RegExp(token));
      }
      assert.equal(ran, 1, 'no tool ran for a refused call');
      // On loopback a local page's origin is served with the token's rules unchanged.
      assert.equal((await post(server.url, call, { origin: 'http://localhost:6274', authorization: 'Bearer wrong-token-0123456789' })).status, 401);
      assert.equal((await post(server.url, call, { authorization: `Bearer ${token}` })).status, 200);
      assert.equal((await post(server.url, call, { authorization: `bearer  ${token}` })).status, 200);
      const client = await connect(server.url, { authorization: `Bearer ${token}` });
      assert.deepEqual((await client.callTool({ name: 'count', arguments: {} })).structuredContent, { ran: 4 });
      await client.close();
    } finally {
      await server.close();
    }
  });

  it('refuses to start beyond loopback without a credential, and with a short token', async () => {
    for (const host of ['0.0.0.0', '10.200.0.1', '::']) {
      await assert.rejects(startToolServer({ tools: registry(), logger, port: 0, host }), (err: LookoutError) => {
        assert.equal(err.code, 'config_invalid');
        assert.match(err.message, /beyond loopback the tool server requires a credential; set LOOKOUT_FLEET_SECRET .* or LOOKOUT_TOOL_TOKEN/);
        assert.equal((err.details as { usage: boolean }).usage, true);
        return true;
      });
    }
    await assert.rejects(startToolServer({ tools: registry(), logger, port: 0, token: 'short' }), /at least 16 characters/);
  });
});
