/**
 * Health enrichment of many devices at once, against fake device tool servers on 127.0.0.1
 * (test/support/fake-mcp-device.ts): a hub of 1 000 devices printed "MaxListenersExceededWarning:
 * 11 abort listeners added to [AbortSignal]". The shared identity calls of every device ran on one
 * hub-wide signal, each call in flight holding a listener on it: eleven devices whose identity was
 * being asked at once were enough.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { startFakeMcpDevice, type FakeMcpDevice } from '../../../../support/fake-mcp-device.js';
import { callTool, testHub, waitFor } from '../../../../support/hub-helpers.js';

const DEVICES = 16;
const TOOLS = ['get_system_health', 'get_device_identity', 'get_peer_mesh_status'].map((name) => ({ name, annotations: { readOnlyHint: true } }));

describe('health enrichment of many devices at once', () => {
  const fakes: FakeMcpDevice[] = [];
  let hub: RunningHub;
  let dir: string;

  before(async () => {
    for (let i = 0; i < DEVICES; i++) fakes.push(await startFakeMcpDevice(TOOLS));
    dir = mkdtempSync(join(tmpdir(), 'tools-proxy-listeners-'));
    const registryFile = join(dir, 'registry.json');
    const devices = fakes.map((f, i) => ({ device_id: `cam-${i}`, ips: ['127.0.0.1'], tool_port: f.port }));
    writeFileSync(registryFile, JSON.stringify({ devices }));
    hub = await testHub({ dataDir: dir, registryFile, toolTimeoutMs: 10_000, env: { READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '600000' } });
  });
  after(async () => {
    for (const f of fakes) f.releaseHeld();
    await hub?.close();
    await Promise.all(fakes.map((f) => f.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds no listener per device to a signal the devices share (no MaxListenersExceededWarning)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      for (const f of fakes) f.hold('get_device_identity');
      const answers = fakes.map((_, i) => callTool(hub.url, `cam-${i}`, 'get_system_health'));
      await waitFor('every device asked for its identity', () => fakes.every((f) => f.calls('get_device_identity') === 1));
      for (const f of fakes) f.releaseHeld();
      for (const r of await Promise.all(answers)) assert.equal(r.status, 200, r.text);
      // A warning is emitted on the next turn at the latest.
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
