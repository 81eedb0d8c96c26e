/**
 * Health enrichment on a device whose tools/list has no get_peer_mesh_status (a camera without the
 * peer mesh plugin): once the hub's pool has read the list, the helper is no longer asked (it
 * would only answer "unknown tool" on the device's one event loop), and the answer says why the
 * mesh fields are missing in the same words as when it was asked. A fake device tool server
 * (test/support/fake-mcp-device.ts) counts every tools/call it gets, known tool or not.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { startFakeMcpDevice, type FakeMcpDevice } from '../../../../support/fake-mcp-device.js';
import { callTool, testHub, waitFor } from '../../../../support/hub-helpers.js';

const TOOLS = ['get_system_health', 'get_device_identity'].map((name) => ({ name, annotations: { readOnlyHint: true, idempotentHint: true } }));
const MESH = 'get_peer_mesh_status';
const SAID = `peer_mesh: ${MESH} failed: cam-m has no tool named "${MESH}"`;

describe('POST /tools/call: health enrichment of a device without a peer mesh tool', () => {
  let fake: FakeMcpDevice;
  let hub: RunningHub;
  let dir: string;

  before(async () => {
    fake = await startFakeMcpDevice(TOOLS);
    dir = mkdtempSync(join(tmpdir(), 'tools-proxy-undeclared-'));
    const registryFile = join(dir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-m', ips: ['127.0.0.1'], tool_port: fake.port }] }));
    hub = await testHub({ dataDir: dir, registryFile, toolTimeoutMs: 3000, env: { READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '600000' } });
  });
  after(async () => {
    await hub?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks the device for the mesh only until its tools/list was read, and says the same either way', async () => {
    const first = await callTool(hub.url, 'cam-m', 'get_system_health');
    assert.equal(first.status, 200, first.text);
    assert.ok(first.body._vms_enrichment_missing.includes(SAID), first.text);
    await waitFor('the pool read the device tools/list', () => Promise.resolve(fake.lists >= 1));
    const askedBefore = fake.asked(MESH);
    assert.ok(askedBefore <= 1, `asked ${askedBefore} times before the list was read`);
    for (let i = 0; i < 3; i++) {
      const r = await callTool(hub.url, 'cam-m', 'get_system_health');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.status, 'ok');
      assert.equal(r.body.peer_mesh, null);
      assert.ok(r.body._vms_enrichment_missing.includes(SAID), r.text);
    }
    assert.equal(fake.asked(MESH), askedBefore, 'the mesh tool was asked after the list said the device has none');
    assert.equal(fake.calls('get_system_health'), 4);
  });

  it('still forwards a direct call of the tool to the device, which answers it unknown', async () => {
    const before = fake.asked(MESH);
    const r = await callTool(hub.url, 'cam-m', MESH);
    assert.equal(r.status, 404, r.text);
    assert.equal(r.body.error.code, 'tool_not_found');
    assert.equal(fake.asked(MESH), before + 1);
  });
});
