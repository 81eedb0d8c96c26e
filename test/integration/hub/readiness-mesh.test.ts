/**
 * Readiness of a real mesh: a hub (embedded broker, the readiness and a2a plugins, its client
 * certificate of the fleet CA) and two `lookout-edge` devices of the mesh-camera image on 127.0.0.1
 * (free ports), with their certificates, one mesh key and short heartbeats. Both grade ready in the mesh,
 * sidecar, identity, tool server and A2A modules (the whole device and the fleet ready), and the
 * five-minute check passes; get_system_health through
 * POST /tools/call carries the device's real peer_mesh. Killing one device stops its mesh and
 * sidecar: its modules fall to not_ready and its peer's mesh falls with it (its only peer is gone);
 * started again, both recover.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EnrichedHealthResponseSchema, PeerMeshStatusSchema } from '../../../core/src/contracts/index.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import a2a from '../../../hub/plugins/a2a/src/index.js';
import readiness from '../../../hub/plugins/readiness/src/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { provisionTestFleetCerts } from '../../support/fleet-certs.js';
import { api, testHub, waitFor } from '../../support/hub-helpers.js';

const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'mesh-camera.json');
const MESH_KEY = 'readiness-test-mesh-key-77d0a3c1';
const MESH_ENV = { MESH_KEY, MESH_HEARTBEAT_MS: '200', HEALTH_INTERVAL_MS: '60000' };
/**
 * Both on 127.0.0.1 with free mesh and sidecar ports: a device's hello announces 127.0.0.1 first
 * whatever its --tool-host, and the hub reaches a device at its hello's address.
 */
const DEVICES = [{ id: 'mesh-ready-a' }, { id: 'mesh-ready-b' }];
const HOST = '127.0.0.1';
const MESH_MODULES = ['device_identity_fp', 'peer_sidecar', 'hermes_mesh', 'cross_a2a_federation'];

interface DeviceView {
  grade: string;
  reason: string | null;
  checked_at: string;
  modules: Record<string, { grade: string; evidence: { value: unknown; reason: string | null } }>;
  five_minute_check: { passed: boolean; fields: Record<string, { ok: boolean; reason: string | null }> };
}

describe('readiness of a real peer mesh', () => {
  let dir: string;
  let hub: RunningHub;
  const running = new Map<string, DeviceProcess>();

  const start = async (d: (typeof DEVICES)[number]) => {
    const p = await startDeviceProcess({
      deviceId: d.id,
      mqtt: hub.brokerUrl,
      image: IMAGE,
      layer: 'layer0',
      dataDir: join(dir, d.id),
      extraArgs: ['--mesh-port', '0', '--sidecar-port', '0'],
      env: MESH_ENV,
      readyTimeoutMs: 30_000,
    });
    running.set(d.id, p);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-readiness-mesh-'));
    await provisionTestFleetCerts(join(dir, 'ca'), {
      devices: DEVICES.map((d) => ({ id: d.id, dataRoot: join(dir, d.id), ips: [HOST] })),
      hubDataDir: join(dir, 'hub'),
    });
    const set = await loadHubPluginSet();
    hub = await testHub({
      dataDir: join(dir, 'hub'),
      plugins: [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'a2a' && p.name !== 'readiness'), a2a, readiness],
      essential: set.essential,
      toolTimeoutMs: 4000,
      env: { READINESS_INTERVAL_MS: '1000', READINESS_RECHECK_DELAY_MS: '200', READINESS_CHECK_TIMEOUT_MS: '6000' },
    });
    for (const d of DEVICES) await start(d);
  });

  after(async () => {
    for (const p of running.values()) await p.stop();
    await hub?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const view = async (id: string): Promise<DeviceView | undefined> => {
    const r = await api(hub.url, '/fleet/readiness');
    assert.equal(r.status, 200, r.text);
    return r.body.devices[id];
  };
  /** Ready in the mesh modules with its one peer up (a device graded before its peer started is ready alone). */
  const meshReady = (d: DeviceView | undefined) =>
    d !== undefined &&
    MESH_MODULES.every((m) => d.modules[m].grade === 'ready') &&
    (d.modules.hermes_mesh.evidence.value as { peers_up: number }).peers_up === 1;

  it('grades both devices ready in identity, sidecar, mesh, mcp_health and A2A, the five-minute check passing, and the fleet ready', async () => {
    for (const { id } of DEVICES) {
      const d = await waitFor(
        `${id} ready in the mesh modules`,
        async () => {
          const v = await view(id);
          return meshReady(v) ? v : undefined;
        },
        30_000,
        200,
      );
      assert.equal(d.five_minute_check.passed, true, JSON.stringify(d.five_minute_check));
      assert.equal(d.modules.mcp_health.grade, 'ready', d.modules.mcp_health.evidence.reason ?? '');
      assert.equal((d.modules.hermes_mesh.evidence.value as { peers_up: number }).peers_up, 1);
      assert.equal((d.modules.cross_a2a_federation.evidence.value as { caller: string }).caller, 'lookout-hub');
      assert.equal(d.grade, 'ready', d.reason ?? '');
    }
    const grade = await api(hub.url, '/fleet/grade');
    assert.equal(grade.body.grade, 'ready', grade.text);
    assert.deepEqual(grade.body.modules.cross_a2a_federation, { ready: 2, degraded: 0, not_ready: 0, not_applicable: 0 });
    // Mesh cameras carry no video plugin and run layer 0.
    assert.equal(grade.body.modules.depth_fusion.not_applicable, 2);
    assert.equal(grade.body.modules.rtsp.not_applicable, 2);
  });

  it('get_system_health through POST /tools/call carries the device’s real peer_mesh', async () => {
    const r = await api(hub.url, `/tools/call?target=${DEVICES[0].id}`, { json: { tool: 'get_system_health', arguments: {} } });
    assert.equal(r.status, 200, r.text);
    const parsed = EnrichedHealthResponseSchema.safeParse(r.body);
    assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
    const mesh = PeerMeshStatusSchema.parse(r.body.peer_mesh);
    assert.equal(mesh.device_id, DEVICES[0].id);
    assert.equal(mesh.peer_comm_status, 'ok');
    assert.deepEqual(
      mesh.peers.map((p) => [p.device_id, p.state]),
      [[DEVICES[1].id, 'up']],
    );
    assert.equal(mesh.sidecar.listening, true);
    assert.equal(r.body.peer_comm_status, 'ok');
    assert.equal(r.body._vms_enrichment_missing, undefined, r.text);
  });

  it('a killed device’s mesh and sidecar stop: its grades and its peer’s mesh fall, and recover when it returns', async () => {
    const [a, b] = DEVICES;
    await running.get(b.id)!.kill();
    const gone = await waitFor(
      `${b.id} not_ready in its mesh modules`,
      async () => {
        const v = await view(b.id);
        return v && ['hermes_mesh', 'peer_sidecar', 'cross_a2a_federation'].every((m) => v.modules[m].grade === 'not_ready') ? v : undefined;
      },
      20_000,
      200,
    );
    assert.match(gone.modules.hermes_mesh.evidence.reason!, /did not answer get_system_health/);
    assert.match(gone.modules.cross_a2a_federation.evidence.reason!, /^peer_hello failed: /);
    const lonely = await waitFor(
      `${a.id}'s mesh to fall without its peer`,
      async () => {
        const v = await view(a.id);
        return v && v.modules.hermes_mesh.grade !== 'ready' ? v : undefined;
      },
      20_000,
      200,
    );
    assert.match(lonely.modules.hermes_mesh.evidence.reason!, new RegExp(`${b.id} (suspect|down)`));
    assert.notEqual(lonely.grade, 'ready');

    await start(b);
    for (const { id } of DEVICES) {
      await waitFor(`${id} ready again`, async () => meshReady(await view(id)), 30_000, 200);
    }
  });
});
