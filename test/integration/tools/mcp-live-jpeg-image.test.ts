/**
 * get_live_jpeg as an MCP client sees it: the official MCP SDK client against a real device tool
 * server over a real encoder gets an image content block (image/jpeg) beside the structured result,
 * so that MCP clients show the picture; the structured result is the tool's JSON as before, and
 * the hub's reading of it (structuredContent) is unchanged.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { LiveJpegResultSchema } from '../../../core/src/contracts/recording-tools.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startToolServer } from '../../../edge/src/tool-server.js';
import { toolOutcomeOf } from '../../../core/src/tools/tool-result.js';
import { EncodedVideoToken } from '../../../plugins/encode/src/service.js';
import { jpegSize } from '../../../plugins/encode/src/jpeg-size.js';
import { startPluginDevice } from '../../support/plugin-device.js';
import { waitFor } from '../../support/wait-for.js';

const run = promisify(execFile);

let broker: EmbeddedBroker;
before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
});
after(async () => {
  await broker.close();
});

test('MCP SDK client: get_live_jpeg answers an image/jpeg content block (a decodable JPEG) beside the unchanged structured result', async () => {
  const image = JSON.parse(await readFile(join(packageRoot(), 'test', 'fixtures', 'images', 'encode-camera.json'), 'utf8')) as { plugins: string[] };
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: image.plugins,
    layer: 'layer0',
    env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', LIVE_PORT: '0', HEALTH_INTERVAL_MS: '60000' },
  });
  const server = await startToolServer({ tools: device.runtime.tools, logger: createLogger({ level: 'silent' }), port: 0 });
  const client = new Client({ name: 'lookout-test', version: '1.0.0' });
  const dir = await mkdtemp(join(tmpdir(), 'lookout-mcp-jpeg-'));
  try {
    const video = device.runtime.service(EncodedVideoToken)!;
    await waitFor(() => video.latestGop().length >= 1, 'a keyframe from the encoder', 15_000);
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    // callTool checks structuredContent against the tool's output schema, as every SDK client does.
    const result = await client.callTool({ name: 'get_live_jpeg', arguments: { w: 200, q: 70 } });
    assert.notEqual(result.isError, true);
    const content = result.content as { type: string; text?: string; data?: string; mimeType?: string }[];
    const images = content.filter((c) => c.type === 'image');
    assert.equal(images.length, 1, `one image block (blocks: ${content.map((c) => c.type).join(', ')})`);
    assert.equal(images[0].mimeType, 'image/jpeg');
    const bytes = Buffer.from(images[0].data!, 'base64');
    assert.deepEqual([bytes[0], bytes[1]], [0xff, 0xd8], 'starts with SOI');
    assert.deepEqual([bytes.at(-2), bytes.at(-1)], [0xff, 0xd9], 'ends with EOI');
    assert.deepEqual(jpegSize(bytes), { width: 200, height: 150 });
    // A real decoder reads it: ffprobe decodes the picture and reports its size.
    const file = join(dir, 'live.jpg');
    await writeFile(file, bytes);
    const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,width,height', '-of', 'json', file]);
    const stream = (JSON.parse(probe.stdout) as { streams: { codec_name: string; width: number; height: number }[] }).streams[0];
    assert.deepEqual([stream.codec_name, stream.width, stream.height], ['mjpeg', 200, 150]);

    // The structured result is the tool's JSON as before: the same picture, the schema's fields.
    const structured = LiveJpegResultSchema.parse(result.structuredContent);
    assert.equal(structured.jpeg_base64, images[0].data);
    assert.deepEqual([structured.width, structured.height, structured.bytes], [200, 150, bytes.length]);
    const text = content.find((c) => c.type === 'text');
    assert.deepEqual(JSON.parse(text!.text!), result.structuredContent, 'the text block is still the JSON');
    // The hub's tools-proxy reads structuredContent: its outcome is the tool's JSON, the image block aside.
    assert.deepEqual(toolOutcomeOf(result as never), { status: 'ok', result: result.structuredContent });

    // A tool without a picture answers no image block.
    const other = await client.callTool({ name: 'get_camera_profile', arguments: {} });
    assert.ok(!(other.content as { type: string }[]).some((c) => c.type === 'image'));
  } finally {
    await client.close();
    await server.close();
    await device.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
