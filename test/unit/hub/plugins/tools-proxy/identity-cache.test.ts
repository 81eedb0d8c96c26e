/**
 * get_device_identity answers kept for health enrichment (hub/plugins/tools-proxy/src/identity-cache.ts):
 * the cache alone on a test clock, then through POST /tools/call against a fake device tool server
 * (test/support/fake-mcp-device.ts) that counts the calls reaching it, with a hello published on
 * the hub's broker as a restarted device would.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RegisteredDevice } from '../../../../../hub/plugins/registry/src/service.js';
import type { AuxOutcome } from '../../../../../hub/plugins/tools-proxy/src/health-enrichment.js';
import { IdentityCache } from '../../../../../hub/plugins/tools-proxy/src/identity-cache.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { startFakeMcpDevice, type FakeMcpDevice } from '../../../../support/fake-mcp-device.js';
import { api, callTool, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../../../support/hub-helpers.js';

const device = (over: Partial<RegisteredDevice> = {}): RegisteredDevice => ({
  deviceId: 'cam-1',
  ips: ['127.0.0.1'],
  labels: [],
  roles: [],
  ports: { tools: 8765 },
  source: 'hello',
  namedInFile: false,
  toolUrl: 'http://127.0.0.1:8765/mcp',
  lastHelloAt: 1000,
  ...over,
});

describe('IdentityCache', () => {
  const ok: AuxOutcome = { status: 'ok', result: { cert_fingerprint: 'AA:BB' } };

  it('keeps an answer for its time to live, then asks again', async () => {
    let now = 0;
    const cache = new IdentityCache(30_000, 100, () => now);
    let asked = 0;
    const ask = () => (asked++, Promise.resolve(ok));
    assert.deepEqual(await cache.get(device(), ask), ok);
    now = 29_999;
    await cache.get(device(), ask);
    assert.equal(asked, 1);
    now = 30_000;
    await cache.get(device(), ask);
    assert.equal(asked, 2);
  });

  it('asks again once the device announced itself again or moved', async () => {
    const cache = new IdentityCache(30_000, 100, () => 0);
    let asked = 0;
    const ask = () => (asked++, Promise.resolve(ok));
    await cache.get(device(), ask);
    await cache.get(device({ lastHelloAt: 2000 }), ask);
    assert.equal(asked, 2, 'a new hello');
    await cache.get(device({ lastHelloAt: 2000, toolUrl: 'http://127.0.0.2:8765/mcp' }), ask);
    assert.equal(asked, 3, 'another tool server');
    await cache.get(device({ lastHelloAt: 2000, toolUrl: 'http://127.0.0.2:8765/mcp' }), ask);
    assert.equal(asked, 3);
  });

  it('shares a call in flight, and keeps neither a failure nor an error answer', async () => {
    const cache = new IdentityCache(30_000, 100, () => 0);
    let release!: (o: AuxOutcome) => void;
    const shared: boolean[] = [];
    const first = cache.get(device(), (s) => (shared.push(s), new Promise<AuxOutcome>((r) => (release = r))));
    const second = cache.get(device(), () => Promise.reject(new Error('not asked')));
    release({ status: 'failed', error: 'the device did not answer get_device_identity within 50 ms' });
    assert.equal((await first).status, 'failed');
    assert.equal((await second).status, 'failed', 'the waiting caller gets the same answer');
    assert.deepEqual(shared, [true], 'asked as a call others may share');
    await new Promise((r) => setImmediate(r));
    assert.equal(cache.size, 0, 'the failure is not kept');
    await cache.get(device(), () => Promise.resolve({ status: 'error', error: 'no identity', code: 'tool_failed' }));
    await new Promise((r) => setImmediate(r));
    assert.equal(cache.size, 0, 'nor an error answer');
  });

  it('holds at most maxEntries devices, forgetting the oldest', async () => {
    const cache = new IdentityCache(30_000, 2, () => 0);
    let asked = 0;
    const ask = () => (asked++, Promise.resolve(ok));
    for (const id of ['a', 'b', 'c']) await cache.get(device({ deviceId: id }), ask);
    assert.equal(cache.size, 2);
    await cache.get(device({ deviceId: 'c' }), ask);
    assert.equal(asked, 3, 'c is kept');
    await cache.get(device({ deviceId: 'a' }), ask);
    assert.equal(asked, 4, 'a was forgotten');
  });

  it('asks every time with a time to live of 0, as a call of the request alone', async () => {
    const cache = new IdentityCache(0, 100, () => 0);
    const shared: boolean[] = [];
    await cache.get(device(), (s) => (shared.push(s), Promise.resolve(ok)));
    await cache.get(device(), (s) => (shared.push(s), Promise.resolve(ok)));
    assert.deepEqual(shared, [false, false]);
    assert.equal(cache.size, 0);
  });
});

const TOOLS = ['get_system_health', 'get_device_identity', 'get_peer_mesh_status'].map((name) => ({
  name,
  annotations: { readOnlyHint: true, idempotentHint: true },
}));

async function hubFor(fake: FakeMcpDevice, env: Record<string, string>): Promise<{ hub: RunningHub; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tools-proxy-identity-'));
  const registryFile = join(dir, 'registry.json');
  writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-i', ips: ['127.0.0.1'], tool_port: fake.port }] }));
  const hub = await testHub({
    dataDir: dir,
    registryFile,
    toolTimeoutMs: 3000,
    env: { READINESS_RECHECK_ON_CHANGE: '0', READINESS_START_DELAY_MS: '600000', ...env },
  });
  return { hub, dir };
}

describe('POST /tools/call: the identity of health enrichment', () => {
  let fake: FakeMcpDevice;
  let hub: RunningHub;
  let dir: string;

  before(async () => {
    fake = await startFakeMcpDevice(TOOLS);
    ({ hub, dir } = await hubFor(fake, {}));
  });
  after(async () => {
    await hub?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks get_device_identity once for several health answers, the peer mesh and the health every time', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await callTool(hub.url, 'cam-i', 'get_system_health');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body._vms_enriched, true);
    }
    assert.equal(fake.calls('get_system_health'), 3);
    assert.equal(fake.calls('get_peer_mesh_status'), 3);
    assert.equal(fake.calls('get_device_identity'), 1);
  });

  it('asks again after the device announced itself again (a restart comes with a hello)', async () => {
    const before = fake.calls('get_device_identity');
    const bus = await mqttClient(hub.brokerUrl);
    try {
      const announcedAt = async () =>
        ((await api(hub.url, '/fleet/registry')).body.shadows as { device_id: string; last_hello_at: string | null }[]).find((s) => s.device_id === 'cam-i')
          ?.last_hello_at ?? null;
      await publish(bus, 'devices/cam-i/hello', msg.hello('cam-i', ['127.0.0.1'], fake.port), { retain: true });
      await waitFor('the registry took the hello', async () => (await announcedAt()) !== null);
    } finally {
      await endClient(bus);
    }
    assert.equal((await callTool(hub.url, 'cam-i', 'get_system_health')).status, 200);
    assert.equal(fake.calls('get_device_identity'), before + 1);
    assert.equal((await callTool(hub.url, 'cam-i', 'get_system_health')).status, 200);
    assert.equal(fake.calls('get_device_identity'), before + 1);
  });
});

describe('POST /tools/call: LOOKOUT_HUB_IDENTITY_CACHE_MS=0', () => {
  it('asks get_device_identity with every health answer', async () => {
    const fake = await startFakeMcpDevice(TOOLS);
    const { hub, dir } = await hubFor(fake, { LOOKOUT_HUB_IDENTITY_CACHE_MS: '0' });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await callTool(hub.url, 'cam-i', 'get_system_health')).status, 200);
      assert.equal(fake.calls('get_device_identity'), 3);
    } finally {
      await hub.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
