import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import readiness from '../../../../../hub/plugins/readiness/src/index.js';
import { loadHubPluginSet } from '../../../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { api, msg, sleep, testHub, waitFor } from '../../../../support/hub-helpers.js';
import { freePort } from '../../../../support/free-port.js';
import { startFakeMcpDevice, type FakeMcpDevice } from '../../../../support/fake-mcp-device.js';

async function hubWith(env: Record<string, string>, toolTimeoutMs = 1000): Promise<{ hub: RunningHub; bus: MemoryBus }> {
  const bus = new MemoryBus();
  const set = await loadHubPluginSet();
  const hub = await testHub({
    bus,
    plugins: [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'readiness'), readiness],
    essential: set.essential,
    toolTimeoutMs,
    env,
  });
  return { hub, bus };
}

/** A device on the bus; without a tool port, one nothing listens on (its tool server is absent). */
const announce = async (bus: MemoryBus, id: string, toolPort?: number) => {
  await bus.publish(`devices/${id}/hello`, JSON.stringify(msg.hello(id, ['127.0.0.1'], toolPort ?? (await freePort()))));
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

  describe('bounds', () => {
    let hub: RunningHub;
    let bus: MemoryBus;
    let device: FakeMcpDevice;
    before(async () => {
      ({ hub, bus } = await hubWith({ READINESS_RECHECK_ON_CHANGE: '0', READINESS_CHECK_TIMEOUT_MS: '400' }, 10_000));
      // The edge of the world: a device tool server whose get_system_health does not answer until released.
      device = await startFakeMcpDevice([{ name: 'get_system_health' }]);
      device.hold('get_system_health');
      await announce(bus, 'cam-held', device.port);
      await announce(bus, 'cam-cancel', device.port);
      await waitFor('both registered', async () => (await api(hub.url, '/fleet/registry')).body.shadows.length === 2);
    });
    after(async () => {
      device.releaseHeld();
      await device.close();
      await hub.close();
      await bus.close();
    });

    it('ends a check at READINESS_CHECK_TIMEOUT_MS and stores what it saw, naming the bound', async () => {
      const r = await api(hub.url, '/fleet/validate?target=cam-held', { method: 'POST' });
      assert.equal(r.status, 200, r.text);
      const d = r.body.devices['cam-held'];
      assert.equal(d.modules.mcp_health.grade, 'not_ready');
      assert.match(d.modules.mcp_health.evidence.reason, /device_timeout: the readiness check of cam-held took longer than 400 ms/);
    });

    it('stores nothing of a check its client gave up on', async () => {
      await assert.rejects(api(hub.url, '/fleet/validate?target=cam-cancel', { method: 'POST', signal: AbortSignal.timeout(100) }));
      // Past the check's own bound: a check that went on would have been stored by now.
      await sleep(700);
      const r = await api(hub.url, '/fleet/readiness?device=cam-cancel');
      assert.equal(r.status, 404, r.text);
      assert.equal(r.body.error.details.known, true);
    });
  });

  describe('checks on change, many devices at once', () => {
    let hub: RunningHub;
    let bus: MemoryBus;
    const devices: FakeMcpDevice[] = [];
    const ids = ['cam-w1', 'cam-w2', 'cam-w3', 'cam-w4', 'cam-w5', 'cam-w6'];
    before(async () => {
      ({ hub, bus } = await hubWith(
        { READINESS_CONCURRENCY: '2', READINESS_RECHECK_DELAY_MS: '0', READINESS_CHECK_TIMEOUT_MS: '2000', READINESS_START_DELAY_MS: '86400000' },
        10_000,
      ));
      // The edge of the world: tool servers whose get_system_health never answers, so each check runs to its bound.
      for (const _ of ids) {
        const device = await startFakeMcpDevice([{ name: 'get_system_health' }]);
        device.hold('get_system_health');
        devices.push(device);
      }
    });
    after(async () => {
      for (const d of devices) {
        d.releaseHeld();
        await d.close();
      }
      await hub.close();
      await bus.close();
    });

    it('checks a fleet that says hello at once READINESS_CONCURRENCY devices at a time, and grades every one', async () => {
      // A thousand hellos used to start a thousand checks at once, READINESS_RECHECK_DELAY_MS later (a stall of the hub).
      await Promise.all(ids.map((id, i) => announce(bus, id, devices[i].port)));
      const called = () => devices.filter((d) => d.calls('get_system_health') > 0).length;
      await waitFor('a first check under way', async () => called() > 0);
      // Each check holds for its 2 s bound: until then only the first READINESS_CONCURRENCY may have started.
      assert.ok(called() <= 2, `${called()} devices checked at once, READINESS_CONCURRENCY is 2`);
      for (const id of ids) {
        const d = await waitFor(`${id} graded`, async () => (await api(hub.url, `/fleet/readiness?device=${id}`)).body.devices?.[id], 30_000);
        assert.equal(d.modules.mcp_health.grade, 'not_ready');
      }
    });
  });

  describe('checks the hub sets off itself, paced', () => {
    let hub: RunningHub;
    let bus: MemoryBus;
    const ids = ['cam-p1', 'cam-p2', 'cam-p3', 'cam-p4'];
    /** Per device: a tool server that notes when the hub first spoke to it and refuses at once (a check ends in milliseconds). */
    const servers = ids.map(() => ({ server: createServer(), firstAt: undefined as number | undefined }));
    before(async () => {
      ({ hub, bus } = await hubWith({
        READINESS_CONCURRENCY: '64',
        READINESS_RECHECK_DELAY_MS: '0',
        READINESS_CHECKS_PER_S: '2',
        READINESS_START_DELAY_MS: '86400000',
      }));
      for (const s of servers) {
        s.server.on('request', (_req, res) => {
          s.firstAt ??= Date.now();
          res.writeHead(503).end();
        });
        await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
      }
    });
    after(async () => {
      await hub.close();
      await bus.close();
      for (const s of servers) await new Promise((resolve) => s.server.close(resolve));
    });

    it('starts the checks of a fleet that says hello at once READINESS_CHECKS_PER_S a second, not in one burst', async () => {
      // Concurrency alone let checks that end at once run back to back: a thousand hellos took half the hub's loop for seconds.
      await Promise.all(ids.map((id, i) => announce(bus, id, (servers[i].server.address() as AddressInfo).port)));
      await waitFor('every device checked', async () => servers.every((s) => s.firstAt !== undefined), 30_000);
      const at = servers.map((s) => s.firstAt!).sort((a, b) => a - b);
      // Four starts at 2 a second span 1.5 s; a loaded machine only spreads them further (a fifth of it is left for a late first call).
      assert.ok(at[3] - at[0] >= 1200, `the checks started within ${at[3] - at[0]} ms of each other`);
      for (const id of ids) await waitFor(`${id} graded`, async () => (await api(hub.url, `/fleet/readiness?device=${id}`)).body.devices?.[id], 30_000);
    });
  });

  describe('concurrent validates', () => {
    let hub: RunningHub;
    let bus: MemoryBus;
    const devices: FakeMcpDevice[] = [];
    before(async () => {
      ({ hub, bus } = await hubWith({ READINESS_RECHECK_ON_CHANGE: '0', READINESS_CHECK_TIMEOUT_MS: '1500', READINESS_START_DELAY_MS: '86400000' }, 10_000));
      // The edge of the world: two device tool servers whose get_system_health is held, so every
      // validate below arrives while the first one's checks are still running (each ends at its bound).
      for (const id of ['cam-a', 'cam-b']) {
        const device = await startFakeMcpDevice([{ name: 'get_system_health' }]);
        device.hold('get_system_health');
        devices.push(device);
        await announce(bus, id, device.port);
      }
      await waitFor('both registered', async () => (await api(hub.url, '/fleet/registry')).body.shadows.length === 2);
    });
    after(async () => {
      for (const d of devices) {
        d.releaseHeld();
        await d.close();
      }
      await hub.close();
      await bus.close();
    });

    it('join the checks running: N requests make one check per device, and one client giving up stops nobody else', async () => {
      const validate = (path: string, signal?: AbortSignal) => api(hub.url, path, { method: 'POST', ...(signal ? { signal } : {}) });
      const gaveUp = assert.rejects(validate('/fleet/validate', AbortSignal.timeout(100)));
      const answers = await Promise.all([
        validate('/fleet/validate'),
        validate('/fleet/validate'),
        validate('/fleet/validate?target=cam-a'),
        validate('/fleet/validate?target=cam-b'),
        validate('/fleet/validate'),
      ]);
      await gaveUp;
      for (const r of answers) assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        devices.map((d) => d.calls('get_system_health')),
        [1, 1],
        'one get_system_health per device',
      );
      for (const id of ['cam-a', 'cam-b']) {
        const seen = answers.filter((r) => r.body.validated.includes(id)).map((r) => r.body.devices[id]);
        assert.equal(seen.length, 4, `every request that asked for ${id} got its grade`);
        assert.equal(new Set(seen.map((d) => d.checked_at)).size, 1, `one check of ${id}`);
        assert.match(seen[0].modules.mcp_health.evidence.reason, /took longer than 1500 ms/);
      }
    });
  });
});
