import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { LookoutError } from '../../../core/src/errors/lookout-error.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { ToolRegistry } from '../../../core/src/tools/tool-registry.js';
import { startToolServer, type ToolServer } from '../../../edge/src/tool-server.js';
import { TOOL_ERROR_META_KEY } from '../../../core/src/tools/tool-result.js';

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
  tools.declare('demo', { name: 'list_things', description: 'returns an array', input: z.object({}) });
  tools.register('demo', 'list_things', () => [1, 2, 3]);
  return tools;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

function post(url: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
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
    assert.deepEqual(tools.map((t) => t.name).sort(), ['add', 'explode', 'list_things', 'refuse']);
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

  it('wraps a non-object result so structuredContent stays an object', async () => {
    const result = await client.callTool({ name: 'list_things', arguments: {} });
    assert.deepEqual(result.structuredContent, { result: [1, 2, 3] });
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

  it('answers an unknown tool with an error result', async () => {
    const result = await client.callTool({ name: 'nope', arguments: {} });
    assert.equal(result.isError, true);
    assert.match((result.content as { text: string }[])[0].text, /no tool named "nope"/);
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
