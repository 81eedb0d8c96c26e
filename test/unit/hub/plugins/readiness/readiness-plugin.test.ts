import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import readiness from '../../../../../hub/plugins/readiness/src/index.js';
import { loadHubPluginSet } from '../../../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { api, msg, sleep, testHub, waitFor } from '../../../../integration/hub-helpers.js';
import { freePort } from '../../../../support/free-port.js';

async function hubWith(env: Record<string, string>): Promise<{ hub: RunningHub; bus: MemoryBus }> {
  const bus = new MemoryBus();
  const set = await loadHubPluginSet();
  const hub = await testHub({
    bus,
    plugins: [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'readiness'), readiness],
    essential: set.essential,
    toolTimeoutMs: 1000,
    env,
  });
  return { hub, bus };
}

const announce = async (bus: MemoryBus, id: string) => {
  // A port nothing listens on: the device's tool server is absent.
  await bus.publish(`devices/${id}/hello`, JSON.stringify(msg.hello(id, ['127.0.0.1'], await freePort())));
  await bus.publish(`devices/${id}/status`, JSON.stringify(msg.status(id)));
};

describe('the readiness plugin in a hub', () => {
  describe('checks on change', () => {
    let hub: RunningHub;
    let bus: MemoryBus;
    before(async () => ({ hub, bus } = await hubWith({ READINESS_RECHECK_DELAY_MS: '20', READINESS_CHECK_TIMEOUT_MS: '3000' })));
    after(async () => {
      await hub.close();
      await bus.close();
    });

    it('grades a device soon after its hello, and again when its status changes', async () => {
      await announce(bus, 'cam-change');
      const first = await waitFor('cam-change graded', async () => (await api(hub.url, '/fleet/readiness?device=cam-change')).body.devices?.['cam-change']);
      assert.equal(first.grade, 'not_ready');
      assert.match(first.modules.mcp_health.evidence.reason, /device_unreachable/);
      await bus.publish('devices/cam-change/status', JSON.stringify(msg.status('cam-change', 'offline')));
      const again = await waitFor('a newer grade after the status changed', async () => {
        const d = (await api(hub.url, '/fleet/readiness?device=cam-change')).body.devices['cam-change'];
        return Date.parse(d.checked_at) > Date.parse(first.checked_at) ? d : undefined;
      });
      assert.equal(again.modules.mcp_health.evidence.value.presence, 'offline');
    });

    it('answers 404 for a device it does not know', async () => {
      const r = await api(hub.url, '/fleet/readiness?device=cam-nobody');
      assert.equal(r.status, 404, r.text);
      assert.equal(r.body.error.code, 'target_unknown');
      assert.equal(r.body.error.details.known, false);
    });
  });

  describe('with READINESS_RECHECK_ON_CHANGE=0', () => {
    let hub: RunningHub;
    let bus: MemoryBus;
    before(async () => ({ hub, bus } = await hubWith({ READINESS_RECHECK_ON_CHANGE: '0', READINESS_RECHECK_DELAY_MS: '0' })));
    after(async () => {
      await hub.close();
      await bus.close();
    });

    it('leaves a new device unchecked until a round or POST /fleet/validate, and counts it not_ready meanwhile', async () => {
      await announce(bus, 'cam-quiet');
      await waitFor('cam-quiet registered', async () => (await api(hub.url, '/fleet/registry?device=cam-quiet')).body.shadows.length === 1);
      // A check on change would have run at once (delay 0): give it the time it would take.
      await sleep(300);
      const grade = (await api(hub.url, '/fleet/grade')).body;
      assert.deepEqual(grade.unchecked, ['cam-quiet']);
      assert.equal(grade.by_grade.not_ready, 1);
      const one = await api(hub.url, '/fleet/readiness?device=cam-quiet');
      assert.equal(one.status, 404);
      assert.equal(one.body.error.details.known, true);
      assert.match(one.body.error.message, /not been checked yet: POST \/fleet\/validate\?target=cam-quiet/);
      const health = (await api(hub.url, '/fleet/health?device=cam-quiet')).body.devices['cam-quiet'];
      assert.equal(health.readiness.grade, 'not_ready');
      assert.equal(health.readiness.source, 'readiness');
      assert.equal(health.readiness.checked_at, null);

      const validated = await api(hub.url, '/fleet/validate', { method: 'POST' });
      assert.equal(validated.status, 200, validated.text);
      assert.deepEqual(validated.body.validated, ['cam-quiet']);
      assert.deepEqual(validated.body.fleet.unchecked, []);
    });
  });
});
