/**
 * The hub against real devices (`lookout-edge` processes) on a real broker, run once with the hub's
 * embedded broker (hub-fleet-embedded.test.ts) and once with mosquitto (hub-fleet-mosquitto.test.ts):
 * every route with the spec's fields, tool forwarding with health enrichment, 403/404/502/504, a
 * silent device turning stale, a killed device shown offline, a hello outside the device networks.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CacheEntrySchema } from '../../../core/src/contracts/cache-entry.js';
import { EnrichedHealthResponseSchema } from '../../../core/src/contracts/health-enrichment.js';
import { RegistryRecordSchema } from '../../../core/src/contracts/registry-record.js';
import { ToolCallResponseSchema } from '../../../core/src/contracts/tool-call.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, callTool, endClient, mqttClient, msg, publish, sleep, testHub, waitFor } from '../../support/hub-helpers.js';

export interface SuiteBroker {
  /** Broker URL for the hub's --mqtt, or undefined: the hub runs its embedded broker. */
  url?: string;
  stop(): Promise<void>;
}

const STALE_SEC = 3;
const TOOL_TIMEOUT_MS = 3000;
const image = (name: string) => join(packageRoot(), 'test', 'fixtures', 'images', `${name}.json`);

export function hubFleetSuite(label: string, startBroker: () => Promise<SuiteBroker>): void {
  describe(`hub with real devices on ${label}`, () => {
    let broker: SuiteBroker;
    let hub: RunningHub;
    let camA: DeviceProcess;
    let camB: DeviceProcess;
    let sentinel: Server;
    let sentinelPort = 0;
    let sentinelConnections = 0;
    const devices: DeviceProcess[] = [];

    before(async () => {
      broker = await startBroker();
      const dataDir = mkdtempSync(join(tmpdir(), 'hub-fleet-'));
      // The registry file names a device that is not running: it is registered, so contacting it is allowed.
      writeFileSync(
        join(dataDir, 'registry.json'),
        JSON.stringify({ bus_id: 'test-fleet', devices: [{ device_id: 'cam-absent', ips: ['127.0.0.1'], tool_port: 9, labels: ['spare'] }] }),
      );
      hub = await testHub({
        ...(broker.url ? { mqttUrl: broker.url } : {}),
        dataDir,
        staleSec: STALE_SEC,
        toolTimeoutMs: TOOL_TIMEOUT_MS,
        deviceNetworks: ['127.0.0.1/32'],
      });
      const mqtt = broker.url ?? hub.brokerUrl;
      // Listens where a rogue hello will point: any connection here means the hub trusted it.
      sentinel = createServer((socket) => {
        sentinelConnections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => sentinel.listen(0, '127.0.0.2', resolve));
      sentinelPort = (sentinel.address() as { port: number }).port;
      [camA, camB] = await Promise.all([
        startDeviceProcess({
          deviceId: 'cam-a',
          image: image('hub-camera-mesh'),
          layer: 'layer1',
          role: 'front_door',
          mqtt,
          env: { HEALTH_INTERVAL_MS: '1000' },
        }),
        startDeviceProcess({ deviceId: 'cam-b', image: image('hub-camera'), layer: 'layer1', role: 'canary', mqtt, env: { HEALTH_INTERVAL_MS: '1000' } }),
      ]);
      devices.push(camA, camB);
      await waitFor(
        'both devices in the cache with telemetry, health and a reachable registry entry',
        async () => {
          const latest = (await api(hub.url, '/fleet/mqtt/latest')).body.devices;
          const reg = (await api(hub.url, '/fleet/registry')).body.shadows as { device_id: string; reachable: boolean }[];
          return ['cam-a', 'cam-b'].every(
            (id) => latest[id]?.payload && latest[id]?.health && latest[id]?.status && reg.some((s) => s.device_id === id && s.reachable),
          );
        },
        20_000,
      );
    });

    after(async () => {
      await Promise.all(devices.map((d) => d.stop()));
      await hub?.close();
      await broker?.stop();
      await new Promise<void>((resolve) => (sentinel ? sentinel.close(() => resolve()) : resolve()));
    });

    it('GET /fleet/mqtt/latest: one entry per device with the spec fields', async () => {
      const { devices: entries } = (await api(hub.url, '/fleet/mqtt/latest')).body;
      for (const id of ['cam-a', 'cam-b']) {
        const e = entries[id];
        const parsed = CacheEntrySchema.safeParse(e);
        assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
        assert.equal(e.status.state, 'online');
        assert.equal(typeof e.payload.telemetry.die_temp, 'number');
        assert.ok(Number.isInteger(e.payload.telemetry.fps));
        assert.ok(Array.isArray(e.dets));
        assert.ok(Array.isArray(e.recent_chunks));
        assert.ok(Array.isArray(e.anomaly_alerts));
        assert.equal(e.stale_sec, STALE_SEC);
        assert.equal(e.stale, false);
        assert.equal(e.online, true);
      }
      assert.equal(entries['cam-b'].payload.camera_id, 'canary');
    });

    it('GET /fleet/mqtt/config: broker host, subscriptions and live ingest status', async () => {
      // The devices' first few messages may be all there is yet (one run had ten or fewer): telemetry keeps coming.
      await waitFor('more than ten messages ingested', async () => (await api(hub.url, '/fleet/mqtt/config')).body.ingest.messages > 10, 10_000);
      const c = (await api(hub.url, '/fleet/mqtt/config')).body;
      assert.equal(c.broker.host, '127.0.0.1');
      assert.equal(c.broker.embedded, broker.url === undefined);
      assert.doesNotMatch(JSON.stringify(c.broker), /@/);
      assert.ok(c.topics_subscribed.includes('devices/+/telemetry/#'));
      assert.ok(c.topics_subscribed.includes('devices/+/hello'));
      assert.equal(c.ingest.connected, true);
      assert.ok(c.ingest.messages > 10);
      assert.equal(c.ingest.invalid, 0, JSON.stringify(c.ingest));
      assert.ok(Date.now() - Date.parse(c.ingest.last_message_at) < 5000);
    });

    it('GET /fleet/registry: the file and the hellos merged', async () => {
      const r = (await api(hub.url, '/fleet/registry')).body;
      assert.ok(RegistryRecordSchema.safeParse(r).success, JSON.stringify(RegistryRecordSchema.safeParse(r).error?.issues));
      assert.equal(r.registry.bus_id, 'test-fleet');
      const ids = r.shadows.map((s: { device_id: string }) => s.device_id);
      assert.deepEqual(ids, ['cam-a', 'cam-absent', 'cam-b']);
      const b = r.shadows.find((s: { device_id: string }) => s.device_id === 'cam-b');
      assert.deepEqual(b.labels, ['canary']);
      assert.equal(b.bus_id, 'test-fleet');
      assert.equal(b.tool_url, `http://127.0.0.1:${camB.ready.ports.tools}/mcp`);
      assert.match(r.path, /registry\.json$/);
    });

    it('GET /fleet/health, /health and /debug/events answer from the live fleet', async () => {
      const h = (await api(hub.url, '/fleet/health')).body;
      assert.equal(h.devices['cam-a'].presence, 'online');
      assert.equal(h.devices['cam-a'].storage_health, 'OK');
      // The grade is the readiness plugin's (cam-a's test mesh has no sidecar): the bus cache's own checks all pass.
      assert.equal(h.devices['cam-a'].readiness.source, 'readiness');
      assert.deepEqual(h.devices['cam-a'].readiness.failing, []);
      assert.equal(h.devices['cam-absent'].presence, 'unknown');
      assert.equal(h.fleet.online, 2);
      const live = (await api(hub.url, '/health')).body;
      assert.equal(live.status, 'ok');
      assert.equal(live.bus_connected, true);
      const ev = (await api(hub.url, '/debug/events?kind=ingest&device=cam-a&limit=5')).body;
      assert.equal(ev.events.length, 5);
      assert.ok(ev.events.every((e: { kind: string; device_id: string }) => e.kind === 'ingest' && e.device_id === 'cam-a'));
    });

    it('POST /tools/call reaches the device and enriches health answers (peer mesh present)', async () => {
      const r = await callTool(hub.url, 'cam-a', 'get_system_health');
      assert.equal(r.status, 200, r.text);
      const parsed = EnrichedHealthResponseSchema.safeParse(r.body);
      assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
      const b = r.body;
      assert.equal(b.status, 'ok');
      assert.equal(b.target, 'cam-a');
      assert.match(b.cert_fingerprint, /^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/);
      assert.equal(b.cert_fingerprint_present, true);
      assert.equal(b.peer_comm_status, 'ok');
      assert.equal(b.peer_mesh.peer_comm_status, 'ok');
      assert.equal(b.listen_ports.tools, camA.ready.ports.tools);
      assert.equal(b.overlay_mount, '/overlay');
      assert.equal(b._vms_enriched, true);
      assert.equal(b._vms_enrichment_missing, undefined);
      // The device's own answer is intact, the fields added beside it.
      assert.equal(b.result.storage_health, 'OK');
      assert.equal(b.result.device_id, 'cam-a');
      assert.equal(b.result._vms_enriched, true);
      assert.equal(b.result.cert_fingerprint, b.cert_fingerprint);
    });

    it('POST /tools/call says what enrichment could not obtain (no peer mesh) and resolves "canary" by label', async () => {
      const r = await callTool(hub.url, 'canary', 'get_device_health');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.device_id, 'cam-b');
      assert.equal(r.body.target, 'canary');
      assert.equal(r.body._vms_enriched, true);
      assert.equal(r.body.peer_mesh, null);
      assert.equal(r.body.peer_comm_status, null);
      assert.match(r.body.cert_fingerprint, /:/);
      assert.ok(
        r.body._vms_enrichment_missing.some((m: string) => /^peer_mesh: get_peer_mesh_status failed/.test(m)),
        JSON.stringify(r.body._vms_enrichment_missing),
      );
      assert.equal(r.body.result._vms_enriched, true);
      assert.ok(EnrichedHealthResponseSchema.safeParse(r.body).success);
    });

    it('POST /tools/call forwards plain tools by device id and by address:port', async () => {
      const byId = await callTool(hub.url, 'cam-b', 'get_firmware_status');
      assert.equal(byId.status, 200);
      assert.ok(ToolCallResponseSchema.safeParse(byId.body).success);
      assert.equal(byId.body.result.layer, 'layer1');
      const byAddress = await callTool(hub.url, `127.0.0.1:${camA.ready.ports.tools}`, 'get_device_identity');
      assert.equal(byAddress.status, 200);
      assert.equal(byAddress.body.result.device_id, 'cam-a');
    });

    it('POST /tools/call: a tool\u2019s own failure is 200 with status "error" and its message; an unknown tool is 404', async () => {
      const r = await callTool(hub.url, 'cam-a', 'fail_always');
      assert.equal(r.status, 200);
      assert.equal(r.body.status, 'error');
      assert.match(r.body.error.message, /fail_always failed as asked/);
      assert.equal(typeof r.body.error.code, 'string');
      assert.equal(r.body.result, null);
      const unknownTool = await callTool(hub.url, 'cam-a', 'no_such_tool');
      assert.equal(unknownTool.status, 404, unknownTool.text);
      assert.equal(unknownTool.body.error.code, 'tool_not_found');
      const badArgs = await callTool(hub.url, 'cam-a', 'sleep_ms', { ms: 'long' });
      assert.equal(badArgs.body.status, 'error');
    });

    it('POST /tools/call: unknown target 404, slow tool 504, each with its code', async () => {
      const unknown = await callTool(hub.url, 'cam-zzz', 'get_system_health');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'target_unknown');
      const started = Date.now();
      const slow = await callTool(hub.url, 'cam-a', 'sleep_ms', { ms: 60_000 });
      assert.equal(slow.status, 504, slow.text);
      assert.equal(slow.body.error.code, 'device_timeout');
      assert.ok(Date.now() - started < 30_000, 'answered at the timeout, not when the tool finished');
      const fast = await callTool(hub.url, 'cam-a', 'sleep_ms', { ms: 1 });
      assert.equal(fast.status, 200);
      assert.equal(fast.body.result.slept_ms, 1);
      const metrics = (await api(hub.url, '/metrics')).text;
      assert.match(metrics, /lookout_hub_tool_calls_total\{tool="sleep_ms",outcome="timeout"\} 1/);
      assert.match(metrics, /lookout_hub_tool_calls_total\{tool="get_system_health",outcome="ok"\} \d+/);
      assert.match(metrics, /lookout_hub_ingest_messages_total\{topic="telemetry"\} \d+/);
    });

    it('POST /tools/call: a registered device that is not there is 502 device_unreachable', async () => {
      const r = await callTool(hub.url, 'cam-absent', 'get_system_health');
      assert.equal(r.status, 502);
      assert.equal(r.body.error.code, 'device_unreachable');
      const spare = await callTool(hub.url, 'spare', 'get_firmware_status');
      assert.equal(spare.status, 502);
    });

    it('never contacts a device whose hello announces an address outside the device networks', async () => {
      const client = await mqttClient(broker.url ?? hub.brokerUrl);
      try {
        await publish(client, 'devices/rogue/hello', msg.hello('rogue', ['127.0.0.2'], sentinelPort, ['canary']));
        await waitFor('the rogue hello in the registry', async () => (await api(hub.url, '/fleet/registry?device=rogue')).body.shadows[0]);
      } finally {
        await endClient(client);
      }
      const shadow = (await api(hub.url, '/fleet/registry?device=rogue')).body.shadows[0];
      assert.equal(shadow.reachable, false);
      assert.match(shadow.unreachable_reason, /127\.0\.0\.1\/32/);
      for (const target of ['rogue', '127.0.0.2', `127.0.0.2:${sentinelPort}`]) {
        const r = await callTool(hub.url, target, 'get_system_health');
        assert.equal(r.status, 403, `${target}: ${r.text}`);
        assert.equal(r.body.error.code, 'target_not_allowed');
      }
      // "canary" still goes to the real canary: the rogue's label does not make it reachable.
      const canary = await callTool(hub.url, 'canary', 'get_firmware_status');
      assert.equal(canary.body.device_id, 'cam-b');
      await sleep(200);
      assert.equal(sentinelConnections, 0);
      const events = (await api(hub.url, '/debug/events?kind=registry&device=rogue')).body.events;
      assert.match(events.at(-1).message, /not trusted/);
    });

    it('shows a silent device as stale past stale_sec', async () => {
      process.kill(camB.child.pid!, 'SIGSTOP');
      try {
        const entry = await waitFor(
          'cam-b stale',
          async () => {
            const e = (await api(hub.url, '/fleet/mqtt/latest?device=cam-b')).body.devices['cam-b'];
            return e.stale ? e : undefined;
          },
          10_000,
        );
        assert.ok(entry.age_s > STALE_SEC);
        assert.equal(entry.online, false);
        assert.equal(entry.status.state, 'online', 'its last status still says online: only the age tells');
        assert.equal((await api(hub.url, '/fleet/health?device=cam-b')).body.devices['cam-b'].presence, 'stale');
        assert.equal((await api(hub.url, '/fleet/mqtt/latest?device=cam-a')).body.devices['cam-a'].stale, false);
      } finally {
        process.kill(camB.child.pid!, 'SIGCONT');
      }
      await waitFor('cam-b fresh again', async () => !(await api(hub.url, '/fleet/mqtt/latest?device=cam-b')).body.devices['cam-b'].stale, 10_000);
    });

    it('shows a killed device offline (its last-will) and answers tool calls to it 502', async () => {
      await camA.kill();
      const entry = await waitFor(
        'cam-a offline',
        async () => {
          const e = (await api(hub.url, '/fleet/mqtt/latest?device=cam-a')).body.devices['cam-a'];
          return e.status.state === 'offline' ? e : undefined;
        },
        10_000,
      );
      assert.equal(entry.online, false);
      assert.equal((await api(hub.url, '/fleet/health?device=cam-a')).body.devices['cam-a'].presence, 'offline');
      const r = await callTool(hub.url, 'cam-a', 'get_system_health');
      assert.equal(r.status, 502);
      assert.equal(r.body.error.code, 'device_unreachable');
      const presence = (await api(hub.url, '/debug/events?kind=presence&device=cam-a')).body.events;
      assert.equal(presence.at(-1).details.state, 'offline');
    });
  });
}
