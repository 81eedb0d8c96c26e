/**
 * The fleet history keeps what the hub did besides what the devices said (issue 29 items 1 and 4),
 * in its SQLite file across a restart: a real `lookout-edge` process records chunks and raises an
 * incident, the hub pulls and understands it (media plugin, video_understand on the device), and
 * the history answers the incident with that understanding; an svc-agent execute and a remediation
 * apply on the same device are audit rows (who, what, outcome) the history answers after a restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, callTool, testHub, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'cam-history-audit';
const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'history-audit-camera.json');
const ENV = {
  LOOKOUT_HISTORY_FLUSH_MS: '100',
  LOOKOUT_MEDIA_STEP_TIMEOUT_MS: '5000',
  LOOKOUT_MEDIA_INCIDENT_WAIT_MS: '0',
  READINESS_START_DELAY_MS: '600000',
  READINESS_RECHECK_ON_CHANGE: '0',
  REMEDIATE_SETTLE_MS: '2000',
};

interface StoredEvent {
  device_id: string;
  at: string;
  name: string;
  body: Record<string, any>;
  understanding?: Record<string, any> | null;
}

describe('fleet history: incidents with their understanding, and audits, across a hub restart', () => {
  let dir: string;
  let device: DeviceProcess | undefined;
  let incidentAt: string;
  let span: string;

  const hubAt = (): Promise<RunningHub> => testHub({ dataDir: join(dir, 'hub'), toolTimeoutMs: 10_000, env: ENV });
  const events = async (hub: RunningHub, kind: string): Promise<StoredEvent[]> => {
    const r = await api(hub.url, `/fleet/history/events?target=${DEVICE}&kind=${kind}&${span}`);
    assert.equal(r.status, 200, r.text);
    return r.body.events as StoredEvent[];
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lookout-history-audit-'));
    const t0 = Date.now();
    const hub = await hubAt();
    try {
      device = await startDeviceProcess({
        deviceId: DEVICE,
        mqtt: hub.brokerUrl,
        image: IMAGE,
        layer: 'layer0',
        dataDir: join(dir, 'device'),
        env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', CHUNK_SECONDS: '2', HEALTH_INTERVAL_MS: '500' },
        readyTimeoutMs: 30_000,
      });
      await waitFor(
        'two chunks in the hub cache',
        async () => ((await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices?.[DEVICE]?.recent_chunks?.length ?? 0) >= 2,
        40_000,
        250,
      );

      // An incident inside a recorded chunk: the hub pulls it and asks the device to understand it.
      const [newest] = (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE].recent_chunks as { started_at: string }[];
      incidentAt = new Date(Date.parse(newest.started_at) + 500).toISOString();
      const raised = await callTool(hub.url, DEVICE, 'raise_incident', { message: 'gate forced', at: incidentAt });
      assert.equal(raised.body.status, 'ok', raised.text);
      await waitFor(
        'the incident understood',
        async () => {
          const alerts = (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE].anomaly_alerts as {
            message?: string;
            video_understanding?: { status: string };
          }[];
          return alerts.some((x) => x.message === 'gate forced' && x.video_understanding && x.video_understanding.status !== 'pending') || undefined;
        },
        30_000,
        250,
      );

      // An agent's read-only step, run.
      const executed = await api(hub.url, '/svc-agent/execute', {
        json: { plan: { steps: [{ device: DEVICE, tool: 'get_device_health', arguments: {} }] }, agent: 'history-test-agent' },
      });
      assert.equal(executed.status, 200, executed.text);
      assert.equal(executed.body.steps[0].status, 'ok', JSON.stringify(executed.body.steps[0]));

      // The failed plugin's remedy, applied (the operator has fixed what made it fail).
      await waitFor('flaky failed in /fleet/health', async () => {
        const d = (await api(hub.url, '/fleet/health')).body.devices[DEVICE] as { plugins?: { failed: { name: string }[] } } | undefined;
        return d?.plugins?.failed.some((p) => p.name === 'flaky') || undefined;
      });
      writeFileSync(join(dir, 'device', 'flaky-ready'), 'yes');
      const applied = await api(hub.url, '/fleet/remediate', { method: 'POST', json: { devices: [DEVICE], apply: true } });
      assert.equal(applied.status, 200, applied.text);
      const restart = (applied.body.devices[0].actions as { remedy: string; status: string }[]).find((a) => a.remedy === 'restart_plugin');
      assert.equal(restart?.status, 'done', JSON.stringify(applied.body.devices[0].actions));

      // Nothing waits for a flush: the hub's stop writes what the history gathered.
      span = `from=${t0 - 120_000}&to=${Date.now() + 120_000}`;
    } finally {
      await device?.stop();
      device = undefined;
      await hub.close();
    }
  });

  after(async () => {
    await device?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers the incident with the understanding the hub got from the device, after a restart', async () => {
    const hub = await hubAt();
    try {
      const incidents = (await events(hub, 'event')).filter((e) => e.name === 'incident');
      assert.equal(incidents.length, 1, JSON.stringify(incidents));
      const [incident] = incidents;
      assert.equal(incident.body.message, 'gate forced');
      const u = incident.understanding;
      assert.ok(u, `no understanding with the incident: ${JSON.stringify(incident)}`);
      assert.equal(u.incident_at, incidentAt);
      assert.equal(u.status, 'ok', JSON.stringify(u));
      assert.equal(typeof u.chunk, 'string');
      assert.ok(u.result.chunks.includes(u.chunk), JSON.stringify(u.result));
      assert.equal(typeof u.result.person_max_count, 'number');
    } finally {
      await hub.close();
    }
  });

  it('answers the svc-agent execute and the remediation as audit rows after a restart, per device', async () => {
    const hub = await hubAt();
    try {
      const audits = await events(hub, 'audit');
      const agent = audits.find((a) => a.name === 'svc_agent');
      assert.ok(agent, JSON.stringify(audits));
      assert.deepEqual([agent.device_id, agent.body.who, agent.body.what, agent.body.outcome], [DEVICE, 'history-test-agent', 'get_device_health', 'ok']);
      const remedy = audits.find((a) => a.name === 'remediation');
      assert.ok(remedy, JSON.stringify(audits));
      assert.deepEqual(
        [remedy.device_id, remedy.body.who, remedy.body.what, remedy.body.outcome],
        [DEVICE, 'remediate', 'restart_plugin (mcp_health)', 'done'],
      );
      assert.equal(remedy.body.details.tool, 'restart_plugin');

      const other = await api(hub.url, `/fleet/history/events?target=cam-nobody&kind=audit&${span}`);
      assert.equal(other.status, 404, other.text);
      assert.equal(other.body.error.code, 'target_unknown');
      const bad = await api(hub.url, `/fleet/history/events?target=${DEVICE}&kind=audits&${span}`);
      assert.equal(bad.status, 400, bad.text);
    } finally {
      await hub.close();
    }
  });
});
