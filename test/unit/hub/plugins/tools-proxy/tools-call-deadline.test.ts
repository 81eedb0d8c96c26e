/**
 * The deadline and the caller's signal of a device tool call, against a fake device tool server
 * (test/support/fake-mcp-device.ts) that holds calls until told: past the tool timeout the call is
 * 504 device_timeout and the client is kept (a call's failure is its own); a caller that gives up ends its call at once; a
 * caller's long-lived signal keeps no listener from the calls made with it.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEVICE_REGISTRY } from '../../../../../hub/plugins/registry/src/service.js';
import { DEVICE_TOOLS } from '../../../../../hub/plugins/tools-proxy/src/service.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { startFakeMcpDevice, type FakeMcpDevice } from '../../../../support/fake-mcp-device.js';
import { callTool, testHub, waitFor } from '../../../../support/hub-helpers.js';

const TIMEOUT_MS = 1500;

describe('device tool calls: deadline and the caller’s signal', () => {
  let device: FakeMcpDevice;
  let hub: RunningHub;
  let dir: string;

  before(async () => {
    const readOnly = ['get_thing', 'get_system_health', 'get_device_identity', 'get_peer_mesh_status'].map((name) => ({
      name,
      annotations: { readOnlyHint: true },
    }));
    device = await startFakeMcpDevice([...readOnly, { name: 'hold_thing' }]);
    dir = mkdtempSync(join(tmpdir(), 'tools-proxy-deadline-'));
    const registryFile = join(dir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-d', ips: ['127.0.0.1'], tool_port: device.port }] }));
    hub = await testHub({
      dataDir: dir,
      registryFile,
      toolTimeoutMs: TIMEOUT_MS,
      env: { READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '600000' },
    });
    assert.equal((await callTool(hub.url, 'cam-d', 'get_thing')).status, 200);
  });

  after(async () => {
    device?.releaseHeld();
    await hub?.close();
    await device?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const tools = () => hub.runtime.service(DEVICE_TOOLS)!;
  const target = () => hub.runtime.service(DEVICE_REGISTRY)!.resolve('cam-d');

  it('answers 504 device_timeout past the tool timeout, and the next call goes on the same client', async () => {
    device.hold('hold_thing');
    const initializes = device.initializes;
    const started = Date.now();
    const r = await callTool(hub.url, 'cam-d', 'hold_thing');
    const took = Date.now() - started;
    assert.equal(r.status, 504, r.text);
    assert.equal(r.body.error.code, 'device_timeout');
    assert.equal(r.body.error.details.timeout_ms, TIMEOUT_MS);
    assert.ok(took >= TIMEOUT_MS - 50 && took < TIMEOUT_MS + 3000, `answered after ${took} ms`);
    device.releaseHeld();
    assert.equal((await callTool(hub.url, 'cam-d', 'get_thing')).status, 200);
    assert.equal(device.initializes, initializes, 'the client of the timed-out call was kept');
  });

  it('ends a call whose caller gave up, without waiting for the timeout', async () => {
    device.hold('hold_thing');
    const caller = new AbortController();
    const before = device.calls('hold_thing');
    const call = tools().call(target(), 'hold_thing', {}, caller.signal);
    await waitFor('the call at the device', () => device.calls('hold_thing') === before + 1);
    const started = Date.now();
    caller.abort(new Error('client closed the request'));
    await assert.rejects(call);
    assert.ok(Date.now() - started < TIMEOUT_MS / 2, `ended ${Date.now() - started} ms after the abort`);
    device.releaseHeld();
  });

  it('leaves no listener on a caller’s long-lived signal', async () => {
    const lifelong = new AbortController();
    for (let i = 0; i < 20; i++) assert.equal((await tools().call(target(), 'get_thing', {}, lifelong.signal)).status, 'ok');
    await tools()
      .enrichedHealth(target(), lifelong.signal)
      .catch(() => undefined);
    assert.equal(getEventListeners(lifelong.signal, 'abort').length, 0);
  });
});
