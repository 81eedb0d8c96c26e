/**
 * The console plugin in a real hub: the page at / and its content-hashed assets with their caching
 * headers (immutable for hashed names, revalidated for the page, 304 on a matching ETag), the page
 * public while every data route needs the token, a 503 naming the build when the page is not built,
 * and GET /tools/list through the hub's MCP client (a test double of a device's tool server).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { api, testHub } from '../../../../support/hub-helpers.js';
import { consolePluginSet } from '../../../../browser/console-fleet.js';
import { startFakeMcpDevice, type FakeMcpDevice } from '../../../../support/fake-mcp-device.js';

const TOKEN = 'console-unit-token-0b9e1d';

describe('console plugin', () => {
  let hub: RunningHub;
  let bare: RunningHub;
  let device: FakeMcpDevice;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'console-unit-'));
    device = await startFakeMcpDevice([{ name: 'get_latest_dets', annotations: { readOnlyHint: true } }, { name: 'set_camera_profile' }]);
    const registryFile = join(dir, 'registry.json');
    await writeFile(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-t', tool_url: device.url }] }));
    const set = await consolePluginSet();
    hub = await testHub({ ...set, token: TOKEN, host: '127.0.0.1', anonymousBroker: false, registryFile, env: { READINESS_START_DELAY_MS: '600000' } });
    bare = await testHub({ ...set, env: { LOOKOUT_CONSOLE_ASSETS_DIR: join(dir, 'nothing-built'), READINESS_START_DELAY_MS: '600000' } });
  });

  after(async () => {
    await hub?.close();
    await bare?.close();
    await device?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the page without the token, revalidated, with a policy that loads nothing from elsewhere', async () => {
    const r = await api(hub.url, '/');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(r.headers.get('cache-control'), 'no-cache');
    const csp = r.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /connect-src 'self'/);
    assert.ok(!/https?:/.test(r.text), 'the page names no other origin');
    const again = await api(hub.url, '/', { headers: { 'if-none-match': r.headers.get('etag')! } });
    assert.equal(again.status, 304);
    // Everything the page shows needs the token.
    assert.equal((await api(hub.url, '/fleet/events')).status, 401);
    assert.equal((await api(hub.url, '/tools/list?target=cam-t')).status, 401);
  });

  it('serves the hashed script and stylesheet as immutable for a year, and nothing else', async () => {
    const page = (await api(hub.url, '/')).text;
    const assets = [...page.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1]);
    assert.equal(assets.length, 2, page);
    for (const path of assets) {
      const r = await fetch(hub.url + path, { headers: { 'accept-encoding': 'br, gzip' } });
      assert.equal(r.status, 200, path);
      assert.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      // fetch asks for br and gzip and unpacks what comes: the bytes below are the file's after decompression.
      assert.equal(r.headers.get('content-encoding'), 'br');
      assert.equal(r.headers.get('vary'), 'Accept-Encoding');
      assert.match(r.headers.get('content-type') ?? '', path.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      const body = Buffer.from(await r.arrayBuffer());
      assert.ok(
        body.equals(await readFile(join(packageRoot(), 'dist', 'hub', 'plugins', 'console', 'web', path.slice('/console/'.length)))),
        `${path} is the build's file`,
      );
      const revalidated = await fetch(hub.url + path, { headers: { 'if-none-match': r.headers.get('etag')! } });
      assert.equal(revalidated.status, 304);
    }
    const plain = await api(hub.url, assets[0], { headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.headers.get('content-encoding'), null);
    for (const path of ['/console/index.html', '/console/nope.js', '/console/..%2F..%2Fpackage.json']) {
      assert.equal((await api(hub.url, path)).status, 404, path);
    }
  });

  it('says the page is not built (503) instead of a bare 404', async () => {
    const r = await api(bare.url, '/');
    assert.equal(r.status, 503);
    assert.equal(r.body.error.code, 'console.not_built');
    assert.match(r.body.error.message, /npm run build/);
  });

  it('lists a device’s tools through the hub’s MCP client, with their schemas and annotations', async () => {
    const r = await api(hub.url, '/tools/list?target=cam-t', { token: TOKEN });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.device_id, 'cam-t');
    const names = r.body.tools.map((t: { name: string }) => t.name).sort();
    assert.deepEqual(names, ['get_latest_dets', 'set_camera_profile']);
    const dets = r.body.tools.find((t: { name: string }) => t.name === 'get_latest_dets');
    assert.equal(dets.inputSchema.type, 'object');
    assert.equal(dets.annotations.readOnlyHint, true);
    assert.equal((await api(hub.url, '/tools/list?target=cam-404', { token: TOKEN })).status, 404);
    const bad = await api(hub.url, '/tools/list', { token: TOKEN });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.details.field, 'query.target');
  });

  it('answers device_unreachable (502) when the device’s tool server is down', async () => {
    await device.close();
    const r = await api(hub.url, '/tools/list?target=cam-t', { token: TOKEN });
    assert.equal(r.body.error.code, 'device_unreachable', r.text);
    assert.equal(r.status, 502);
  });
});
