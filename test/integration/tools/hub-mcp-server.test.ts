/**
 * The hub as an MCP server (issue 29 item 2), seen with the official MCP TypeScript client (the SDK's
 * Client over StreamableHTTPClientTransport) against a real hub and a real `lookout-edge` device with
 * the encoder: tools/list names the fleet tools and every device tool as `<device>.<tool>` with the
 * device's own schemas and hints; a device tool through the hub answers what the device answers
 * directly; a snapshot is a decodable image/jpeg block; a long call sends progress when asked; bad
 * input is a JSON-RPC error with the Lookout code; every answer says from which devices and span.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { freePort } from '../../support/free-port.js';
import { startMcpFleet, type McpFleet } from './hub-mcp-fixture.js';

const DEVICE = 'cam-mcp';
const FLEET_TOOLS = ['fleet_devices', 'fleet_latest', 'fleet_health', 'fleet_readiness', 'playback_ready_clips', 'snapshot'];

type Block = { type: string; text?: string; data?: string; mimeType?: string };

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'lookout-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

function jpegSize(jpeg: Buffer): { width: number; height: number } {
  const out = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', 'pipe:0'], { input: jpeg }).toString().trim();
  const [width, height] = out.split(',').map(Number);
  return { width, height };
}

async function rpcError(call: Promise<unknown>): Promise<McpError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof McpError, `a JSON-RPC error, not ${String(err)}`);
    return err;
  }
  assert.fail('the call answered instead of a JSON-RPC error');
}

describe('the hub’s MCP server (POST /mcp) with the official TypeScript client', () => {
  let fleet: McpFleet;
  let hub: Client;
  let direct: Client;

  before(async () => {
    fleet = await startMcpFleet({
      deviceId: DEVICE,
      encode: true,
      hub: { env: { LOOKOUT_HUB_MCP_PROGRESS_MS: '100' } },
      // Named in the registry file, never running: it cannot list its tools.
      registryDevices: [{ device_id: 'cam-dead', ips: ['127.0.0.1'], tool_port: await freePort() }],
    });
    hub = await connect(fleet.hubMcpUrl);
    direct = await connect(fleet.deviceUrl);
  });

  after(async () => {
    await hub?.close();
    await direct?.close();
    await fleet?.close();
  });

  it('tools/list lists the fleet tools and every device tool as <device>.<tool> with the device’s schemas and hints', async () => {
    const { tools } = await hub.listTools();
    const names = tools.map((t) => t.name);
    for (const name of FLEET_TOOLS) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    for (const t of tools.filter((t) => FLEET_TOOLS.includes(t.name))) assert.equal(t.annotations?.readOnlyHint, true, t.name);
    const own = (await direct.listTools()).tools;
    assert.ok(own.length > 0);
    for (const tool of own) {
      const proxied = tools.find((t) => t.name === `${DEVICE}.${tool.name}`);
      assert.ok(proxied, `${DEVICE}.${tool.name} listed`);
      assert.deepEqual(proxied.inputSchema, tool.inputSchema, tool.name);
      assert.deepEqual(proxied.outputSchema, tool.outputSchema, tool.name);
      assert.deepEqual(proxied.annotations, tool.annotations, `${tool.name}: hints passed on`);
    }
    assert.equal(tools.find((t) => t.name === `${DEVICE}.wait_ms`)?.annotations?.readOnlyHint, true);
    assert.equal(tools.find((t) => t.name === `${DEVICE}.sleep_ms`)?.annotations?.readOnlyHint, false);
  });

  it('a device that cannot list its tools is left out of tools/list and named in its _meta', async () => {
    const listed = await hub.listTools();
    assert.ok(!listed.tools.some((t) => t.name.startsWith('cam-dead.')));
    assert.ok(listed.tools.some((t) => t.name === `${DEVICE}.get_camera_profile`));
    assert.deepEqual((listed._meta as Record<string, unknown>)['lookout/unlisted'], [{ device_id: 'cam-dead', code: 'device_unreachable' }]);
    // Its tools called by name: the device's failure as an error result, not a protocol error.
    const call = await hub.callTool({ name: 'cam-dead.get_camera_profile', arguments: {} });
    assert.equal(call.isError, true);
    assert.equal((call._meta as Record<string, any>)['lookout/error'].code, 'device_unreachable');
  });

  it('a device tool through the hub answers what the device answers directly, with its sources', async () => {
    const before = Date.now();
    const through = await hub.callTool({ name: `${DEVICE}.get_camera_profile`, arguments: {} });
    const own = await direct.callTool({ name: 'get_camera_profile', arguments: {} });
    assert.notEqual(through.isError, true, JSON.stringify(through.content));
    assert.deepEqual(through.structuredContent, own.structuredContent);
    assert.deepEqual(through.content, own.content);
    const sources = (through._meta as Record<string, any>)['lookout/sources'];
    assert.deepEqual(sources.devices, [DEVICE]);
    assert.equal(sources.kind, 'call');
    assert.ok(Date.parse(sources.from) >= before - 1000 && Date.parse(sources.to) >= Date.parse(sources.from), JSON.stringify(sources));

    // A tool's own failure is the device's error result, its code kept.
    const failed = await hub.callTool({ name: `${DEVICE}.fail_always`, arguments: {} });
    const failedDirect = await direct.callTool({ name: 'fail_always', arguments: {} });
    assert.equal(failed.isError, true);
    assert.deepEqual(failed.content, failedDirect.content);
  });

  it('a snapshot arrives as a well-formed image/jpeg content block', async () => {
    const result = await hub.callTool({ name: 'snapshot', arguments: { target: DEVICE, w: 200, q: 70 } });
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    const images = (result.content as Block[]).filter((c) => c.type === 'image');
    assert.equal(images.length, 1);
    assert.equal(images[0].mimeType, 'image/jpeg');
    assert.match(images[0].data!, /^[A-Za-z0-9+/]+={0,2}$/, 'base64');
    const bytes = Buffer.from(images[0].data!, 'base64');
    assert.deepEqual([bytes[0], bytes[1], bytes.at(-2), bytes.at(-1)], [0xff, 0xd8, 0xff, 0xd9], 'SOI … EOI');
    assert.deepEqual(jpegSize(bytes), { width: 200, height: 150 });
    const structured = result.structuredContent as Record<string, any>;
    assert.equal(structured.device_id, DEVICE);
    assert.equal(structured.bytes, bytes.length);
    assert.deepEqual(structured.sources.devices, [DEVICE]);

    // The device's get_live_jpeg through the hub keeps its picture block too.
    const live = await hub.callTool({ name: `${DEVICE}.get_live_jpeg`, arguments: { w: 160 } });
    const block = (live.content as Block[]).find((c) => c.type === 'image');
    assert.equal(block?.mimeType, 'image/jpeg');
    assert.deepEqual(jpegSize(Buffer.from(block?.data ?? '', 'base64')), { width: 160, height: 120 });
  });

  it('fleet tools answer the hub’s state with the devices and span their numbers come from', async () => {
    const devices = await hub.callTool({ name: 'fleet_devices', arguments: {} });
    const body = devices.structuredContent as Record<string, any>;
    const row = body.devices.find((d: { device_id: string }) => d.device_id === DEVICE);
    assert.equal(row.online, true);
    assert.deepEqual(body.sources.devices, [DEVICE]);
    assert.ok(body.sources.from && body.sources.to, JSON.stringify(body.sources));

    for (const name of ['fleet_latest', 'fleet_health', 'fleet_readiness', 'playback_ready_clips']) {
      const r = await hub.callTool({ name, arguments: {} });
      assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
      const s = (r.structuredContent as Record<string, any>).sources;
      assert.ok(Array.isArray(s.devices), `${name} has sources`);
    }
    const latest = await hub.callTool({ name: 'fleet_latest', arguments: { device: DEVICE } });
    assert.ok((latest.structuredContent as Record<string, any>).devices[DEVICE], 'the device’s latest messages');
    assert.deepEqual((latest.structuredContent as Record<string, any>).sources.devices, [DEVICE]);
  });

  it('a long device call sends progress notifications when the client gives a progress token', async () => {
    const progress: { progress: number; message?: string }[] = [];
    const result = await hub.callTool({ name: `${DEVICE}.sleep_ms`, arguments: { ms: 1200 } }, undefined, {
      onprogress: (p) => progress.push(p),
      timeout: 30_000,
    });
    assert.deepEqual(result.structuredContent, { slept_ms: 1200 });
    assert.ok(progress.length >= 2, `progress notifications: ${JSON.stringify(progress)}`);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress, 'progress grows');
    assert.match(progress[0].message ?? '', /sleep_ms: running for/);
  });

  it('resources: a card per device', async () => {
    const { resources } = await hub.listResources();
    const card = resources.find((r) => r.name === DEVICE);
    assert.ok(card, JSON.stringify(resources));
    const read = await hub.readResource({ uri: card.uri });
    const content = read.contents[0] as { mimeType: string; text: string };
    assert.equal(content.mimeType, 'application/json');
    const body = JSON.parse(content.text) as Record<string, any>;
    assert.equal(body.device_id, DEVICE);
    assert.ok(body.tools.some((t: { name: string }) => t.name === `${DEVICE}.get_camera_profile`));
    const templates = await hub.listResourceTemplates();
    assert.equal(templates.resourceTemplates[0].uriTemplate, 'lookout-device://{device_id}');
  });

  it('bad input is a JSON-RPC error (-32602) naming the Lookout code; a body that is not JSON is -32700', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['no_such_tool', {}, 'tool_unknown'],
      [`${DEVICE}.no_such_tool`, {}, 'tool_not_found'],
      ['cam-nowhere.get_camera_profile', {}, 'target_unknown'],
      ['snapshot', { target: DEVICE, w: 'wide' }, 'argument_invalid'],
      ['snapshot', { target: DEVICE, extra: 1 }, 'argument_invalid'],
      ['snapshot', { target: 'cam-nowhere' }, 'target_unknown'],
      ['fleet_latest', { stale: 'maybe' }, 'argument_invalid'],
    ];
    for (const [name, args, code] of cases) {
      const err = await rpcError(hub.callTool({ name, arguments: args }));
      assert.equal(err.code, -32602, `${name}: ${err.message}`);
      assert.equal((err.data as { code: string }).code, code, `${name}: ${err.message}`);
    }
    const bad = await rpcError(hub.readResource({ uri: 'lookout-device://cam-nowhere' }));
    assert.equal(bad.code, -32602);

    const res = await fetch(fleet.hubMcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc": "2.0", "id": 1, "method": ',
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32700);
  });
});

describe('tools/list in pages of LOOKOUT_HUB_MCP_TOOLS_PAGE_DEVICES devices (a big fleet)', () => {
  let fleet: McpFleet;
  let hub: Client;
  // Named in the registry, never running: each fails its listing (device_unreachable) and is named in its page's _meta.
  const dead = ['cam-a-dead', 'cam-b-dead', 'cam-z-dead'];

  before(async () => {
    const registryDevices = [];
    for (const id of dead) registryDevices.push({ device_id: id, ips: ['127.0.0.1'], tool_port: await freePort() });
    fleet = await startMcpFleet({ deviceId: DEVICE, hub: { env: { LOOKOUT_HUB_MCP_TOOLS_PAGE_DEVICES: '2' } }, registryDevices });
    hub = await connect(fleet.hubMcpUrl);
  });

  after(async () => {
    await hub?.close();
    await fleet?.close();
  });

  it('walks the fleet page by page with nextCursor: the fleet tools first, each device once, in id order', async () => {
    const pages: { names: string[]; unlisted: unknown }[] = [];
    let cursor: string | undefined;
    do {
      const page = await hub.listTools(cursor === undefined ? {} : { cursor });
      pages.push({ names: page.tools.map((t) => t.name), unlisted: page._meta?.['lookout/unlisted'] });
      cursor = page.nextCursor;
    } while (cursor !== undefined && pages.length < 10);
    // Four devices, two a page: cam-a-dead + cam-b-dead, cam-mcp + cam-z-dead.
    assert.equal(pages.length, 2, JSON.stringify(pages));
    for (const name of FLEET_TOOLS) assert.ok(pages[0].names.includes(name), `${name} on the first page`);
    assert.ok(!pages[1].names.some((n) => FLEET_TOOLS.includes(n)), 'the fleet tools on the first page only');
    assert.deepEqual(pages[0].unlisted, [
      { device_id: 'cam-a-dead', code: 'device_unreachable' },
      { device_id: 'cam-b-dead', code: 'device_unreachable' },
    ]);
    assert.deepEqual(pages[1].unlisted, [{ device_id: 'cam-z-dead', code: 'device_unreachable' }]);
    const own = pages[1].names.filter((n) => n.startsWith(`${DEVICE}.`));
    assert.ok(own.length > 0 && new Set(own).size === own.length, `the device's tools once: ${own.join(', ')}`);
  });

  it('answers a cursor it did not give with -32602', async () => {
    for (const cursor of ['not-a-cursor', Buffer.from('{"after":42}').toString('base64url')]) {
      const err = await hub.listTools({ cursor }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, -32602);
      assert.match(err.message, /cursor/);
    }
  });
});

describe('POST /mcp: Host and Origin on a loopback hub (issue 33)', () => {
  let fleet: McpFleet;
  before(async () => {
    fleet = await startMcpFleet({ deviceId: 'cam-mcp-origin' });
  });
  after(async () => {
    await fleet?.close();
  });

  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'origin-test', version: '1.0.0' } },
  });
  const post = (url: string, headers: Record<string, string>, body = initialize) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });

  it('serves loopback origins of any port (an MCP inspector’s page) and refuses the rest (foreign Hosts: the conformance suite’s dns-rebinding-protection)', async () => {
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1:3000', 'http://[::1]:9000', new URL(fleet.hub.url).origin]) {
      const res = await post(fleet.hubMcpUrl, { origin });
      const text = await res.text();
      assert.equal(res.status, 200, `${origin}: ${text}`);
      assert.match(text, /lookout-hub/);
    }
    for (const origin of ['http://evil.example', 'null', 'http://localhost.evil.example:6274']) {
      const res = await post(fleet.hubMcpUrl, { origin });
      assert.equal(res.status, 403, origin);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'forbidden');
    }
    // The hub's other routes keep their rule: their own origin or a configured one only.
    const other = await post(
      `${fleet.hub.url}/tools/call?target=cam-mcp-origin`,
      { origin: 'http://localhost:6274' },
      JSON.stringify({ tool: 'get_camera_profile', arguments: {} }),
    );
    assert.equal(other.status, 403);
    await other.body?.cancel();
  });
});

describe('POST /mcp behind the hub’s token', () => {
  let fleet: McpFleet;
  const token = 'hub-mcp-test-token-0123456789';

  before(async () => {
    fleet = await startMcpFleet({ deviceId: 'cam-mcp-token', hub: { token, host: '127.0.0.1' } });
  });
  after(async () => {
    await fleet?.close();
  });

  it('refuses a client without the token (401) and serves one with it', async () => {
    await assert.rejects(connect(fleet.hubMcpUrl), /401|unauthorized/i);
    const client = await connect(fleet.hubMcpUrl, { authorization: `Bearer ${token}` });
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'cam-mcp-token.get_camera_profile'));
    await client.close();
  });
});
