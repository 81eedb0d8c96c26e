/**
 * The official MCP SDK client against a real `lookout-edge` process: tools listed with their JSON
 * Schemas, each tool called, bad arguments and failing tools answered as MCP error results while
 * the server stays up, and a camera profile persisted across a restart of the device.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { HealthMessageSchema } from '../../../core/src/contracts/health-message.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { TOOL_ERROR_META_KEY } from '../../../core/src/tools/tool-result.js';
import { BASE_TOOLS } from '../../support/device-image.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';

const image = join(packageRoot(), 'test', 'fixtures', 'images', 'base-camera.json');

type Result = Awaited<ReturnType<Client['callTool']>>;
const text = (r: Result) => (r.content as { type: string; text: string }[])[0].text;

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'lookout-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe('MCP tool server of a running device', () => {
  let broker: EmbeddedBroker;
  let dataDir: string;
  let device: DeviceProcess;
  let client: Client;

  before(async () => {
    broker = await EmbeddedBroker.start({ port: 0 });
    dataDir = await mkdtemp(join(tmpdir(), 'lookout-mcp-'));
    device = await startDeviceProcess({ deviceId: 'cam-mcp', mqtt: broker.url, image, layer: 'layer0', dataDir });
    client = await connect(device.ready.tool_url!);
  });
  after(async () => {
    await client?.close();
    await device?.stop();
    await broker?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('initializes and names the device', () => {
    assert.match(client.getServerVersion()?.name ?? '', /cam-mcp/);
    assert.ok(client.getServerCapabilities()?.tools);
  });

  it('lists every tool with a description and JSON Schemas', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), BASE_TOOLS);
    for (const t of tools) {
      assert.ok(t.description && t.description.length > 10, `${t.name} has a description`);
      assert.equal(t.inputSchema.type, 'object');
      assert.equal(t.outputSchema?.type, 'object', `${t.name} publishes its output schema`);
    }
    const set = tools.find((t) => t.name === 'set_camera_profile')!;
    const props = set.inputSchema.properties as Record<string, { enum?: string[]; maximum?: number }>;
    assert.deepEqual(props.codec.enum, ['H265', 'H264']);
    assert.equal(props.fps.maximum, 60);
    assert.equal(set.inputSchema.additionalProperties, false);
    assert.equal(set.inputSchema.minProperties, 1, 'the schema says an empty update is refused');
  });

  it('annotates the read-only tools (get_*, check_firmware_update) and nothing else as safe to repeat', async () => {
    const { tools } = await client.listTools();
    for (const t of tools) {
      const readOnly = t.name.startsWith('get_') || t.name === 'check_firmware_update';
      assert.deepEqual(t.annotations, { readOnlyHint: readOnly, idempotentHint: readOnly }, t.name);
    }
  });

  it('calls get_device_identity: id, serial, ports and the certificate fingerprint', async () => {
    const r = await client.callTool({ name: 'get_device_identity', arguments: {} });
    const identity = r.structuredContent as {
      device_id: string;
      serial: string;
      listen_ports: Record<string, number>;
      cert_fingerprint: string;
      cert_fingerprint_present: boolean;
    };
    assert.equal(identity.device_id, 'cam-mcp');
    assert.match(identity.serial, /^SIM-/);
    assert.equal(identity.listen_ports.tools, device.ready.ports.tools);
    assert.match(identity.cert_fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.equal(identity.cert_fingerprint_present, true);
    assert.deepEqual(JSON.parse(text(r)), identity);
  });

  it('calls get_system_health and get_device_health', async () => {
    const system = (await client.callTool({ name: 'get_system_health', arguments: {} })).structuredContent!;
    const health = HealthMessageSchema.parse(system);
    assert.equal(health.storage_health, 'OK');
    assert.equal(health.storage.path, join(dataDir, 'data', 'recordings'));
    const device_ = (await client.callTool({ name: 'get_device_health', arguments: {} })).structuredContent as {
      plugins: { name: string; state: string }[];
      thermal_state: string;
      die_temp_c: number;
    };
    assert.equal(device_.thermal_state, 'NORMAL');
    assert.ok(device_.die_temp_c > 40 && device_.die_temp_c < 56);
    assert.ok(device_.plugins.every((p) => p.state === 'ok'));
  });

  it('calls get_firmware_status and check_firmware_update', async () => {
    const fw = (await client.callTool({ name: 'get_firmware_status', arguments: {} })).structuredContent as {
      runtime_version: string;
      layer: string;
      image: string;
      plugins: unknown[];
    };
    assert.equal(fw.layer, 'layer0');
    assert.equal(fw.image, 'base-camera');
    assert.equal(fw.plugins.length, 6);
    const update = (await client.callTool({ name: 'check_firmware_update', arguments: {} })).structuredContent as {
      update_available: boolean;
      current_version: string;
    };
    assert.equal(update.update_available, false);
    assert.equal(update.current_version, fw.runtime_version);
  });

  it('sets and gets the camera profile, persisted in the profile file', async () => {
    const set = await client.callTool({ name: 'set_camera_profile', arguments: { fps: 10, codec: 'H264' } });
    assert.equal(set.isError, undefined, text(set));
    assert.deepEqual((set.structuredContent as { changed: string[] }).changed.sort(), ['codec', 'fps']);
    const got = (await client.callTool({ name: 'get_camera_profile', arguments: {} })).structuredContent as {
      profile: { fps: number; codec: string };
      path: string;
    };
    assert.equal(got.profile.fps, 10);
    assert.equal(got.path, join(dataDir, 'data', 'config', 'camera_profile.json'));
    const file = JSON.parse(await readFile(got.path, 'utf8')) as { profile: { fps: number; codec: string } };
    assert.deepEqual(file.profile, got.profile);
  });

  it('answers bad arguments with an MCP error result and leaves the profile file untouched', async () => {
    const path = join(dataDir, 'data', 'config', 'camera_profile.json');
    const before = await readFile(path, 'utf8');
    for (const args of [{ fps: 0 }, { codec: 'MJPEG' }, { resolution: '1920*1080' }, { resolution: '99999x1' }, {}, { fps: 10, colour: 'red' }]) {
      const r = await client.callTool({ name: 'set_camera_profile', arguments: args });
      assert.equal(r.isError, true, `refused ${JSON.stringify(args)}`);
      assert.equal((r._meta?.[TOOL_ERROR_META_KEY] as { code: string }).code, 'tool_arguments_invalid');
      assert.match(text(r), /invalid arguments for "set_camera_profile"/);
    }
    const wrongType = await client.callTool({ name: 'get_device_identity', arguments: { extra: 1 } });
    assert.equal(wrongType.isError, undefined, 'a tool without arguments ignores extra ones');
    assert.equal(await readFile(path, 'utf8'), before);
  });

  it('answers a failing tool with an error result and keeps serving', async () => {
    await mkdir(join(dataDir, 'data', 'config'), { recursive: true });
    await writeFile(join(dataDir, 'data', 'config', 'firmware_update.json'), '{ not json');
    const r = await client.callTool({ name: 'check_firmware_update', arguments: {} });
    assert.equal(r.isError, true);
    assert.match(text(r), /firmware_update\.json is not JSON/);
    await writeFile(join(dataDir, 'data', 'config', 'firmware_update.json'), JSON.stringify({ version: '99.0.0', notes: 'test' }));
    const ok = (await client.callTool({ name: 'check_firmware_update', arguments: {} })).structuredContent as {
      update_available: boolean;
      available_version: string;
    };
    assert.deepEqual([ok.update_available, ok.available_version], [true, '99.0.0']);
    await assert.rejects(client.callTool({ name: 'reboot', arguments: {} }), /Unknown tool: reboot/);
    const still = await client.callTool({ name: 'get_firmware_status', arguments: {} });
    assert.equal(still.isError, undefined);
  });

  it('keeps the camera profile across a restart of the device', async () => {
    await client.close();
    await device.stop();
    device = await startDeviceProcess({ deviceId: 'cam-mcp', mqtt: broker.url, image, layer: 'layer0', dataDir });
    client = await connect(device.ready.tool_url!);
    const got = (await client.callTool({ name: 'get_camera_profile', arguments: {} })).structuredContent as { profile: { fps: number; codec: string } };
    assert.deepEqual([got.profile.fps, got.profile.codec], [10, 'H264']);
  });
});
