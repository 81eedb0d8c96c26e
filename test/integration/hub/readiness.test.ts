/**
 * Readiness end to end: a real hub (embedded broker) with the readiness plugin and two real
 * `lookout-edge` devices of the base image (no peer-mesh plugin, no video plugins, layer 0). The
 * checks grade what the devices answer through the hub: the mesh modules not_ready with the hub's
 * reason (no get_peer_mesh_status tool), the video modules and depth not_applicable; a killed device
 * falls to not_ready in mcp_health and comes back when it returns; POST /fleet/validate answers
 * fresh grades; /fleet/health shows the same grades; a second hub replica sharing the state sees them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import readiness from '../../../hub/plugins/readiness/src/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { MemorySharedState } from '../../../hub/src/state/memory-shared-state.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, testHub, waitFor } from '../../support/hub-helpers.js';

const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'base-camera.json');
const IDS = ['cam-ready-1', 'cam-ready-2'] as const;

interface ModuleView {
  grade: string;
  evidence: { checked: string; at: string; value: unknown; reason: string | null };
}
interface DeviceView {
  device_id: string;
  grade: string;
  reason: string | null;
  checked_at: string;
  checked_by: string;
  modules: Record<string, ModuleView>;
  five_minute_check: { passed: boolean; fields: Record<string, { ok: boolean; reason: string | null }> };
}
interface Readiness {
  fleet: { grade: string; device_count: number; unchecked: string[] };
  devices: Record<string, DeviceView>;
}

describe('readiness grades of real devices', () => {
  const shared = new MemorySharedState();
  let hub: RunningHub;
  let replica: RunningHub;
  const devices = new Map<string, DeviceProcess>();
  const dirs = new Map<string, string>();

  const start = async (id: string) => {
    const device = await startDeviceProcess({
      deviceId: id,
      mqtt: hub.brokerUrl,
      image: IMAGE,
      layer: 'layer0',
      dataDir: dirs.get(id)!,
      readyTimeoutMs: 30_000,
    });
    devices.set(id, device);
    return device;
  };

  before(async () => {
    const set = await loadHubPluginSet();
    // No a2a plugin here: cross_a2a_federation says so (readiness-mesh.test.ts runs one).
    const plugins = [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'a2a' && p.name !== 'readiness'), readiness];
    hub = await testHub({
      hubId: 'hub-a',
      plugins,
      essential: set.essential,
      sharedState: shared,
      toolTimeoutMs: 4000,
      env: { READINESS_INTERVAL_MS: '1500', READINESS_RECHECK_DELAY_MS: '200', READINESS_CHECK_TIMEOUT_MS: '6000' },
    });
    // A second replica: the same shared state, its own broker (no device), rounds far apart.
    replica = await testHub({ hubId: 'hub-b', plugins, essential: set.essential, sharedState: shared, env: { READINESS_INTERVAL_MS: '3600000' } });
    for (const id of IDS) {
      dirs.set(id, await mkdtemp(join(tmpdir(), `lookout-${id}-`)));
      await start(id);
    }
  });

  after(async () => {
    for (const d of devices.values()) await d.stop();
    await replica?.close();
    await hub?.close();
    for (const dir of dirs.values()) await rm(dir, { recursive: true, force: true });
  });

  const readinessOf = async (base = hub.url) => {
    const r = await api<Readiness>(base, '/fleet/readiness');
    assert.equal(r.status, 200, r.text);
    return r.body;
  };
  const deviceView = async (id: string) => (await readinessOf()).devices[id];

  it('grades both devices: identity ready, mesh not_ready (no get_peer_mesh_status), no video, no depth at layer 0', async () => {
    const body = await waitFor(
      'both devices graded with their answers',
      async () => {
        const b = await readinessOf();
        return IDS.every((id) => b.devices[id]?.modules.device_identity_fp.grade === 'ready') ? b : undefined;
      },
      30_000,
      200,
    );
    for (const id of IDS) {
      const d = body.devices[id];
      assert.equal(d.grade, 'not_ready', d.reason ?? '');
      assert.equal(d.checked_by, 'hub-a');
      for (const m of ['hermes_mesh', 'peer_sidecar']) {
        assert.equal(d.modules[m].grade, 'not_ready');
        assert.match(d.modules[m].evidence.reason!, new RegExp(`get_peer_mesh_status failed: ${id} has no tool named "get_peer_mesh_status"`));
      }
      assert.equal(d.modules.cross_a2a_federation.grade, 'not_ready');
      assert.match(d.modules.cross_a2a_federation.evidence.reason!, /no a2a plugin/);
      // The tool server answers; the mesh's fields are missing from its enrichment.
      assert.equal(d.modules.mcp_health.grade, 'degraded', d.modules.mcp_health.evidence.reason ?? '');
      assert.match(d.modules.mcp_health.evidence.reason!, /overlay_mount/);
      assert.equal(d.modules.depth_fusion.grade, 'not_applicable');
      assert.equal(d.modules.depth_fusion.evidence.reason, 'the device runs layer0, below the depth layer (layer3)');
      for (const m of ['recorder', 'playback', 'snapshot', 'onvif', 'rtsp']) assert.equal(d.modules[m].grade, 'not_applicable', m);
      assert.equal(d.five_minute_check.passed, false);
      assert.equal(d.five_minute_check.fields.cert_fingerprint_present.ok, true);
      assert.equal(d.five_minute_check.fields.listen_ports.ok, true);
      assert.equal(d.five_minute_check.fields.peer_mesh.ok, false);
    }
    assert.equal(body.fleet.grade, 'not_ready');
    assert.equal(body.fleet.device_count, 2);
  });

  it('shows the same grades in /fleet/health and in the summary of /fleet/grade', async () => {
    const [health, grade, ready] = await Promise.all([api(hub.url, '/fleet/health'), api(hub.url, '/fleet/grade'), readinessOf()]);
    assert.equal(health.status, 200, health.text);
    for (const id of IDS) {
      assert.equal(health.body.devices[id].readiness.source, 'readiness');
      assert.equal(health.body.devices[id].readiness.grade, ready.devices[id].grade);
      assert.equal(health.body.devices[id].readiness.modules.hermes_mesh, 'not_ready');
      assert.equal(grade.body.devices[id], 'not_ready');
    }
    assert.equal(grade.body.grade, 'not_ready');
    assert.deepEqual(grade.body.by_grade, { ready: 0, degraded: 0, not_ready: 2 });
  });

  it('a second hub replica serves the grades the first stored', async () => {
    const seen = await readinessOf(replica.url);
    for (const id of IDS) assert.equal(seen.devices[id]?.checked_by, 'hub-a');
  });

  it('POST /fleet/validate checks one device now and answers its fresh grades; an unknown target is 404', async () => {
    const before = (await deviceView(IDS[0])).checked_at;
    const r = await api(hub.url, `/fleet/validate?target=${IDS[0]}`, { method: 'POST' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.validated, [IDS[0]]);
    assert.deepEqual(Object.keys(r.body.devices), [IDS[0]]);
    assert.ok(Date.parse(r.body.devices[IDS[0]].checked_at) >= Date.parse(before));
    assert.equal(r.body.fleet.device_count, 2);
    const unknown = await api(hub.url, '/fleet/validate?target=cam-nowhere', { method: 'POST' });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.code, 'target_unknown');
  });

  it('a killed device falls to not_ready in mcp_health and recovers when it returns', async () => {
    const id = IDS[1];
    await devices.get(id)!.kill();
    const fallen = await waitFor(
      'mcp_health not_ready for the killed device',
      async () => {
        const d = await deviceView(id);
        return d?.modules.mcp_health.grade === 'not_ready' ? d : undefined;
      },
      20_000,
      200,
    );
    assert.match(fallen.modules.mcp_health.evidence.reason!, /did not answer get_system_health/);
    assert.equal(fallen.modules.device_identity_fp.grade, 'not_ready');
    // The other device is not touched.
    assert.equal((await deviceView(IDS[0])).modules.mcp_health.grade, 'degraded');

    await start(id);
    const back = await waitFor(
      'mcp_health answering again',
      async () => {
        const d = await deviceView(id);
        return d?.modules.mcp_health.grade === 'degraded' && d.modules.device_identity_fp.grade === 'ready' ? d : undefined;
      },
      30_000,
      200,
    );
    assert.ok(Date.parse(back.checked_at) > Date.parse(fallen.checked_at));
  });

  it('get_system_health through POST /tools/call says why peer_mesh is missing', async () => {
    const r = await api(hub.url, `/tools/call?target=${IDS[0]}`, { json: { tool: 'get_system_health', arguments: {} } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.peer_mesh, null);
    assert.ok(
      r.body._vms_enrichment_missing.some((l: string) => /^peer_mesh: get_peer_mesh_status failed/.test(l)),
      r.text,
    );
  });
});
