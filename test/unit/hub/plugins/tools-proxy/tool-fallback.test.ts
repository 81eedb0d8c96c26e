/**
 * DEVICE_TOOLS fallbacks: when a device's tool server cannot be reached, POST /tools/call answers a
 * tool from the fallback another hub plugin registered (marked `fallback: true`); a tool without one,
 * or a fallback that fails too, gives the tool server's error with the fallback's in its details.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { definePlugin, LookoutError } from '../../../../../core/src/index.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { loadHubPluginSet } from '../../../../../hub/src/hub-plugin-set.js';
import { DEVICE_TOOLS } from '../../../../../hub/plugins/tools-proxy/src/service.js';
import { freePort } from '../../../../support/free-port.js';
import { callTool, testHub } from '../../../../support/hub-helpers.js';

/** A hub plugin as a media plugin would be: it answers `list_things` when the tool server cannot. */
const fallbackPlugin = definePlugin({
  name: 'test-fallbacks',
  version: '1.0.0',
  core: '^1',
  description: 'registers tool fallbacks (test)',
  requires: [DEVICE_TOOLS],
  start(ctx) {
    const tools = ctx.services.get(DEVICE_TOOLS);
    tools.addFallback('list_things', async (device, args, _signal, cause) => ({
      things: ['a'],
      source: 'test',
      device: device.deviceId,
      args,
      cause: cause.code,
    }));
    tools.addFallback('broken_things', async () => {
      throw new LookoutError('ssh_failed', 'no SSH either');
    });
  },
});

describe('tool fallbacks when the tool server is unreachable', () => {
  let hub: RunningHub;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tool-fallback-'));
    const registryFile = join(dir, 'registry.json');
    // Nothing listens on this port: every call to the tool server fails to connect.
    writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-down', ips: ['127.0.0.1'], tool_port: await freePort() }] }));
    const set = await loadHubPluginSet();
    hub = await testHub({ dataDir: dir, registryFile, toolTimeoutMs: 2000, plugins: [...set.plugins, fallbackPlugin], essential: set.essential });
  });
  after(async () => {
    await hub?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers from the fallback, marked as such', async () => {
    const r = await callTool(hub.url, 'cam-down', 'list_things', { limit: 2 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'ok');
    assert.equal(r.body.fallback, true);
    assert.deepEqual(r.body.result, { things: ['a'], source: 'test', device: 'cam-down', args: { limit: 2 }, cause: 'device_unreachable' });
  });

  it('a tool without a fallback gets the tool server failure', async () => {
    const r = await callTool(hub.url, 'cam-down', 'other_things');
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error.code, 'device_unreachable');
  });

  it('a failing fallback keeps the tool server failure and adds its own', async () => {
    const r = await callTool(hub.url, 'cam-down', 'broken_things');
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error.code, 'device_unreachable');
    assert.deepEqual(r.body.error.details.fallback_error, { code: 'ssh_failed', message: 'no SSH either' });
  });
});
