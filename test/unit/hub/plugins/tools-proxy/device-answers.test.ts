/**
 * POST /tools/call forwards what a device answered without validating it a second time: a device
 * tool server made with the MCP SDK's own Server (stateless streamable HTTP on 127.0.0.1, as the
 * edge's tool server is) declares output schemas and answers as a test decides. The device is the
 * one that validates its answers; the hub checks only the shape it reads.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { isToolCallAnswer } from '../../../../../core/src/tools/tool-result.js';
import { callTool, testHub } from '../../../../support/hub-helpers.js';

const READING_SCHEMA = { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] };

/** The answers of the device, by tool: the SDK Server checks their envelope (CallToolResultSchema) before sending, not the output schema. */
const ANSWERS: Record<string, () => unknown> = {
  // Declares celsius a number, answers a word: the device said so, and that is what the caller gets.
  get_reading: () => ({ content: [{ type: 'text', text: '{"celsius":"hot","probe":2}' }], structuredContent: { celsius: 'hot', probe: 2 } }),
  // Declares an output schema, answers text only.
  get_text_reading: () => ({ content: [{ type: 'text', text: '{"celsius":21.5}' }] }),
  fail_with_code: () => {
    throw new McpError(ErrorCode.InternalError, 'the sensor is gone', { code: 'sensor_fault' });
  },
  fail_plain: () => {
    throw new McpError(ErrorCode.InvalidParams, 'probe must be 1 or 2');
  },
  fail_as_tool: () => ({ content: [{ type: 'text', text: 'disk on fire' }], isError: true, _meta: { 'lookout/error': { code: 'storage_failed' } } }),
};

async function startSdkDevice(): Promise<{ port: number; close(): Promise<void> }> {
  const http: HttpServer = createServer((req, res) => {
    const server = new Server({ name: 'sdk-device', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: Object.keys(ANSWERS).map((name) => ({
        name,
        inputSchema: { type: 'object' as const },
        outputSchema: READING_SCHEMA as { type: 'object' },
        annotations: { readOnlyHint: true },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, (request) => ANSWERS[request.params.name]() as never);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    port: (http.address() as AddressInfo).port,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('POST /tools/call: the device’s answer as the device gave it', () => {
  let device: { port: number; close(): Promise<void> };
  let hub: RunningHub;
  let dir: string;

  before(async () => {
    device = await startSdkDevice();
    dir = mkdtempSync(join(tmpdir(), 'tools-proxy-answers-'));
    const registryFile = join(dir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-sdk', ips: ['127.0.0.1'], tool_port: device.port }] }));
    hub = await testHub({
      dataDir: dir,
      registryFile,
      toolTimeoutMs: 3000,
      env: { READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '600000' },
    });
    // The first call connects; the hub then reads tools/list (the output schemas) in the background.
    assert.equal((await callTool(hub.url, 'cam-sdk', 'get_text_reading')).status, 200);
    await new Promise((r) => setTimeout(r, 100));
  });

  after(async () => {
    await hub?.close();
    await device?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('forwards structuredContent that does not match the tool’s declared output schema, as the device sent it', async () => {
    const r = await callTool(hub.url, 'cam-sdk', 'get_reading');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'ok', r.text);
    assert.deepEqual(r.body.result, { celsius: 'hot', probe: 2 });
  });

  it('forwards a text-only answer of a tool that declares an output schema, its JSON parsed', async () => {
    const r = await callTool(hub.url, 'cam-sdk', 'get_text_reading');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'ok', r.text);
    assert.deepEqual(r.body.result, { celsius: 21.5 });
  });

  it('maps an MCP error of the device as before: the device’s code when its data names one, else mcp_<JSON-RPC code>', async () => {
    const coded = await callTool(hub.url, 'cam-sdk', 'fail_with_code');
    assert.equal(coded.status, 200, coded.text);
    assert.equal(coded.body.status, 'error');
    assert.equal(coded.body.error.code, 'sensor_fault');
    assert.match(coded.body.error.message, /^MCP error -32603: .*the sensor is gone$/);
    const plain = await callTool(hub.url, 'cam-sdk', 'fail_plain');
    assert.equal(plain.status, 200, plain.text);
    assert.equal(plain.body.error.code, 'mcp_-32602');
    const tool = await callTool(hub.url, 'cam-sdk', 'fail_as_tool');
    assert.equal(tool.status, 200, tool.text);
    assert.deepEqual(tool.body.error, { code: 'storage_failed', message: 'disk on fire' });
    // The client stays pooled: an MCP answer is not a transport failure.
    assert.equal((await callTool(hub.url, 'cam-sdk', 'get_reading')).body.status, 'ok');
  });
});

describe('the shape the hub reads of a tool result', () => {
  it('takes content as a list, structuredContent and _meta as objects, isError as a boolean, and nothing else is checked', () => {
    assert.equal(isToolCallAnswer({ content: [{ type: 'text', text: 'x' }], structuredContent: { a: 1 }, isError: false, _meta: {} }), true);
    assert.equal(isToolCallAnswer({}), true, 'every field is optional');
    assert.equal(isToolCallAnswer({ content: [{ type: 'something-new' }], extra: 1 }), true, 'content blocks are not parsed');
    assert.equal(isToolCallAnswer({ content: 'text' }), false);
    assert.equal(isToolCallAnswer({ structuredContent: [1, 2] }), false);
    assert.equal(isToolCallAnswer({ structuredContent: 'x' }), false);
    assert.equal(isToolCallAnswer({ isError: 'yes' }), false);
    assert.equal(isToolCallAnswer({ _meta: 3 }), false);
    assert.equal(isToolCallAnswer(null), false);
    assert.equal(isToolCallAnswer([]), false);
  });
});
