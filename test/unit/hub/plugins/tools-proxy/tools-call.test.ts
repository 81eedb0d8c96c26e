/**
 * POST /tools/call against fake device tool servers on 127.0.0.1 (test/support/fake-mcp-device.ts):
 * no call repeated behind the caller's back, per-device bounds, argument size, unknown tools as
 * 404 and the per-device bearer token the hub sends.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deviceToolToken } from '../../../../../lib/auth/tool-token.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { startFakeMcpDevice, type FakeMcpDevice } from '../../../../support/fake-mcp-device.js';
import { api, callTool, testHub, waitFor } from '../../../../support/hub-helpers.js';

const SECRET = 'tools-proxy-test-fleet-secret-01';
const TOOLS = [
  { name: 'get_thing', annotations: { readOnlyHint: true, idempotentHint: true } },
  { name: 'reset_thing', annotations: { readOnlyHint: false, idempotentHint: true } },
  { name: 'set_thing', annotations: { readOnlyHint: false, idempotentHint: false } },
  { name: 'legacy_thing' },
  { name: 'hold_thing' },
];

async function hubFor(devices: { id: string; device: FakeMcpDevice }[], env: Record<string, string> = {}): Promise<{ hub: RunningHub; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tools-proxy-'));
  const registryFile = join(dir, 'registry.json');
  writeFileSync(registryFile, JSON.stringify({ devices: devices.map(({ id, device }) => ({ device_id: id, ips: ['127.0.0.1'], tool_port: device.port })) }));
  const hub = await testHub({
    dataDir: dir,
    registryFile,
    toolTimeoutMs: 3000,
    env: { LOOKOUT_FLEET_SECRET: SECRET, READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '600000', ...env },
  });
  return { hub, dir };
}

/** A call pools the hub's client; a new client then reads tools/list in the background: wait for it. */
async function warm(hub: RunningHub, target: string, device: FakeMcpDevice): Promise<void> {
  assert.equal((await callTool(hub.url, target, 'get_thing')).status, 200);
  await waitFor('the hub read the device tool list', () => device.lists >= device.initializes);
  await new Promise((r) => setTimeout(r, 20));
}

describe('POST /tools/call: never repeated behind the caller, bounded, sized', () => {
  let device: FakeMcpDevice;
  let hub: RunningHub;
  let dir: string;

  before(async () => {
    device = await startFakeMcpDevice(TOOLS);
    ({ hub, dir } = await hubFor([{ id: 'cam-f', device }], { LOOKOUT_HUB_TOOL_CONCURRENCY: '2', LOOKOUT_HUB_TOOL_QUEUE: '1' }));
  });
  after(async () => {
    await hub?.close();
    await device?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('does not run a tool that is not declared idempotent a second time when its connection fails after it ran', async () => {
    for (const tool of ['set_thing', 'legacy_thing']) {
      // A pooled connection first: the hub retried only calls on a reused one.
      assert.equal((await callTool(hub.url, 'cam-f', 'get_thing')).status, 200);
      device.cutAfterRunning(tool);
      const r = await callTool(hub.url, 'cam-f', tool);
      assert.equal(device.calls(tool), 1, `${tool} ran once (${r.status} ${r.text})`);
      assert.equal(r.status, 502, `${tool}: ${r.text}`);
      assert.equal(r.body.error.code, 'device_unreachable');
    }
  });

  it('retries a read-only or idempotent tool once on a fresh connection', async () => {
    for (const tool of ['get_thing', 'reset_thing']) {
      await warm(hub, 'cam-f', device);
      const before = device.calls(tool);
      device.cutAfterRunning(tool);
      const r = await callTool(hub.url, 'cam-f', tool);
      assert.equal(r.status, 200, `${tool}: ${r.text}`);
      assert.equal(device.calls(tool), before + 2);
    }
  });

  it('bounds the calls in flight per device: `concurrency` run, `queue` wait, the rest are 429 device_busy at once', async () => {
    device.hold('hold_thing');
    const calls = [0, 1, 2].map(() => callTool(hub.url, 'cam-f', 'hold_thing'));
    await waitFor('two calls at the device', () => device.calls('hold_thing') === 2);
    const started = Date.now();
    const refused = await callTool(hub.url, 'cam-f', 'hold_thing');
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.error.code, 'device_busy');
    assert.ok(Date.now() - started < 1000, 'refused at once, not after the timeout');
    device.releaseHeld();
    const answers = await Promise.all(calls);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200],
    );
    assert.equal(device.peak <= 2, true, `at most two at the device (saw ${device.peak})`);
    assert.equal(device.calls('hold_thing'), 3);
  });

  it('refuses arguments past the shared tool limit (64 KiB) before contacting the device', async () => {
    const before = device.calls('set_thing');
    const r = await callTool(hub.url, 'cam-f', 'set_thing', { pad: 'x'.repeat(70_000) });
    assert.equal(r.status, 413, r.text);
    assert.equal(r.body.error.code, 'payload_too_large');
    assert.equal(r.body.error.details.field, 'body.arguments');
    assert.equal(device.calls('set_thing'), before);
    const name = await callTool(hub.url, 'cam-f', 'x'.repeat(200));
    assert.equal(name.status, 400);
    assert.equal(name.body.error.details.field, 'body.tool');
  });

  it('answers an unknown tool with 404 tool_not_found, not 200 with an error inside', async () => {
    const r = await callTool(hub.url, 'cam-f', 'no_such_tool');
    assert.equal(r.status, 404, r.text);
    assert.equal(r.body.error.code, 'tool_not_found');
    assert.match(r.body.error.message, /cam-f has no tool named "no_such_tool"/);
  });

  it('sends the device its own bearer token, derived from the hub\u2019s fleet secret', () => {
    const expected = `Bearer ${deviceToolToken(SECRET, 'cam-f')}`;
    assert.ok(device.authorizations.length > 0);
    assert.ok(
      device.authorizations.every((a) => a === expected),
      JSON.stringify([...new Set(device.authorizations)]),
    );
  });

  it('counts busy and not-found calls under their own outcomes', async () => {
    const metrics = (await api(hub.url, '/metrics')).text;
    assert.match(metrics, /lookout_hub_tool_calls_total\{tool="hold_thing",outcome="busy"\} 1/);
    assert.match(metrics, /outcome="not_found"\} 1/);
  });

  it('labels metrics only with tool names the devices declare: 70 made-up names share "other"', async () => {
    for (let i = 0; i < 70; i++) assert.equal((await callTool(hub.url, 'cam-f', `junk_${i}`)).status, 404);
    assert.equal((await callTool(hub.url, 'cam-f', 'reset_thing')).status, 200);
    const metrics = (await api(hub.url, '/metrics')).text;
    assert.doesNotMatch(metrics, /tool="junk_/);
    assert.match(metrics, /lookout_hub_tool_calls_total\{tool="other",outcome="not_found"\} 7[01]/);
    assert.match(metrics, /lookout_hub_tool_calls_total\{tool="reset_thing",outcome="ok"\} \d+/);
  });
});

describe('POST /tools/call: devices that refuse the credential, devices of before', () => {
  it('answers 502 device_auth_refused when the device does not accept the hub\u2019s token', async () => {
    const device = await startFakeMcpDevice(TOOLS);
    device.requireToken(deviceToolToken('another-fleet-secret-0000000', 'cam-g'));
    const { hub, dir } = await hubFor([{ id: 'cam-g', device }]);
    try {
      const r = await callTool(hub.url, 'cam-g', 'get_thing');
      assert.equal(r.status, 502, r.text);
      assert.equal(r.body.error.code, 'device_auth_refused');
      assert.doesNotMatch(r.text, new RegExp(deviceToolToken(SECRET, 'cam-g')), 'the token is never in an answer');
      device.requireToken(deviceToolToken(SECRET, 'cam-g'));
      assert.equal((await callTool(hub.url, 'cam-g', 'get_thing')).status, 200);
    } finally {
      await hub.close();
      await device.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('maps an unknown tool answered as an error result (devices before MCP 2025-11-25) to 404 too', async () => {
    const device = await startFakeMcpDevice(TOOLS, { unknownToolAs: 'error-result' });
    const { hub, dir } = await hubFor([{ id: 'cam-h', device }]);
    try {
      const r = await callTool(hub.url, 'cam-h', 'no_such_tool');
      assert.equal(r.status, 404, r.text);
      assert.equal(r.body.error.code, 'tool_not_found');
    } finally {
      await hub.close();
      await device.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('POST /tools/call: a device that lost the session (restarted)', () => {
  it('replaces the client when the device no longer knows its session, and retries a read-only call on the fresh one', async () => {
    const device = await startFakeMcpDevice(TOOLS, { sessions: true });
    const { hub, dir } = await hubFor([{ id: 'cam-s', device }]);
    try {
      await warm(hub, 'cam-s', device);
      const initializes = device.initializes;
      device.forgetSessions();
      const r = await callTool(hub.url, 'cam-s', 'get_thing');
      assert.equal(r.status, 200, r.text);
      assert.equal(device.initializes, initializes + 1, 'a fresh session');
      assert.equal((await callTool(hub.url, 'cam-s', 'set_thing')).status, 200);
      assert.equal(device.initializes, initializes + 1, 'the fresh session is kept');
    } finally {
      await hub.close();
      await device.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
