/**
 * The retained status follows the die on a real image: the die temperature (a thermal zone file,
 * then a simulated ramp) crosses the warn and critical thresholds and the status plugin republishes
 * thermal_state and die_temp_c on each change, at layer 4 after the governor acted, and below it
 * too (the state is the die's; only the governor's actions are layer 4's). Unknown is null with
 * the reason, never NORMAL.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { StatusMessageSchema, type StatusMessage } from '../../../core/src/contracts/status-message.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startDevice } from '../../../edge/src/device-runtime.js';
import { waitFor } from '../../support/wait-for.js';

const logger = createLogger({ level: 'silent' });
const image = join(packageRoot(), 'test', 'fixtures', 'images', 'thermal-camera.json');

describe('status and the thermal governor', () => {
  let dir: string;
  let script: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-thermal-'));
    script = join(dir, 'ramp.json');
    // 50 °C, then past THERMAL_WARN_C (75) within half a second, past THERMAL_CRITICAL_C (85) within one.
    await writeFile(
      script,
      JSON.stringify([
        { atS: 0, celsius: 50 },
        { atS: 0.4, celsius: 80 },
        { atS: 0.8, celsius: 92 },
      ]),
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const statuses = (bus: MemoryBus, id: string): StatusMessage[] =>
    bus.published.filter((m) => m.topic === `devices/${id}/status`).map((m) => StatusMessageSchema.parse(JSON.parse(m.payload.toString())));

  it('republishes the retained status on each thermal change at layer 4', async () => {
    // A thermal zone file the test heats step by step, so each change happens after the device is up.
    const zone = join(dir, 'zone0');
    await writeFile(zone, '50000\n');
    const bus = new MemoryBus();
    const device = await startDevice({
      deviceId: 'cam-hot',
      image,
      layer: 'layer4',
      dataDir: dir,
      bus,
      toolServer: false,
      logger,
      env: { DIE_TEMP_SOURCE: 'zone', DIE_TEMP_ZONE: zone, DIE_TEMP_INTERVAL_MS: '25' },
    });
    try {
      await waitFor(() => statuses(bus, 'cam-hot').length > 0, 'the first status');
      assert.equal(statuses(bus, 'cam-hot')[0].thermal_state, 'NORMAL');
      await writeFile(zone, '80000\n'); // past THERMAL_WARN_C (75)
      await waitFor(() => statuses(bus, 'cam-hot').some((s) => s.thermal_state === 'THERMAL_WARN'), 'a THERMAL_WARN status');
      await writeFile(zone, '92000\n'); // past THERMAL_CRITICAL_C (85)
      await waitFor(() => statuses(bus, 'cam-hot').some((s) => s.thermal_state === 'THERMAL_CRITICAL'), 'a THERMAL_CRITICAL status');
      const seen = statuses(bus, 'cam-hot');
      const states = seen.map((s) => s.thermal_state).filter((s, i, all) => i === 0 || all[i - 1] !== s);
      assert.deepEqual(states, ['NORMAL', 'THERMAL_WARN', 'THERMAL_CRITICAL']);
      const warn = seen.find((s) => s.thermal_state === 'THERMAL_WARN')!;
      assert.equal(warn.die_temp_c, 80);
      assert.equal((warn as { reason?: string }).reason, 'thermal_change');
      assert.ok(bus.published.filter((m) => m.topic === 'devices/cam-hot/status').every((m) => m.options.retain === true));
      const health = (await device.tools.call('get_device_health', {})) as { thermal_state: string; die_temp_c: number };
      assert.deepEqual([health.thermal_state, health.die_temp_c], ['THERMAL_CRITICAL', 92]);
    } finally {
      await device.stop();
      await bus.close();
    }
  });

  it('follows the die below layer 4, where no governor runs: a 92 °C die is THERMAL_CRITICAL in status, health and telemetry', async () => {
    const bus = new MemoryBus();
    const device = await startDevice({
      deviceId: 'cam-cool',
      image,
      layer: 'layer2',
      source: 'sim',
      dataDir: dir,
      bus,
      toolServer: false,
      logger,
      env: { SIM_TEMP_SCRIPT: script, DIE_TEMP_INTERVAL_MS: '25', STATUS_INTERVAL_MS: '100' },
    });
    try {
      await waitFor(() => statuses(bus, 'cam-cool').some((s) => s.die_temp_c! >= 90), 'a status at 90 °C or more');
      assert.ok(
        device.plugins().every((p) => p.name !== 'thermal'),
        'no governor below layer 4',
      );
      const hot = statuses(bus, 'cam-cool').filter((s) => s.die_temp_c! >= 85);
      assert.ok(
        hot.every((s) => s.thermal_state === 'THERMAL_CRITICAL'),
        JSON.stringify(hot.map((s) => [s.die_temp_c, s.thermal_state])),
      );
      const states = statuses(bus, 'cam-cool')
        .map((s) => s.thermal_state)
        .filter((s, i, all) => i === 0 || all[i - 1] !== s);
      assert.deepEqual(states.slice(-1), ['THERMAL_CRITICAL']);
      const health = (await device.tools.call('get_device_health', {})) as { thermal_state: string; die_temp_c: number };
      assert.equal(health.thermal_state, 'THERMAL_CRITICAL');
      await waitFor(
        () =>
          bus.published.some(
            (m) => m.topic === 'devices/cam-cool/telemetry' && JSON.parse(m.payload.toString()).telemetry.thermal_state === 'THERMAL_CRITICAL',
          ),
        'telemetry naming THERMAL_CRITICAL',
      );
    } finally {
      await device.stop();
      await bus.close();
    }
  });

  it('says unknown, with the reason, when the die cannot be read: null, never NORMAL', async () => {
    const bus = new MemoryBus();
    const device = await startDevice({
      deviceId: 'cam-blind',
      image,
      layer: 'layer4',
      dataDir: dir,
      bus,
      toolServer: false,
      logger,
      env: { DIE_TEMP_SOURCE: 'zone', DIE_TEMP_ZONE: join(dir, 'no-such-zone'), DIE_TEMP_INTERVAL_MS: '25' },
    });
    try {
      await waitFor(() => statuses(bus, 'cam-blind').length > 0, 'the first status');
      const first = statuses(bus, 'cam-blind')[0];
      assert.equal(first.thermal_state, null);
      assert.equal(first.die_temp_c, null);
      assert.match(String(first.thermal_state_reason), /die temperature unknown: DIE_TEMP_ZONE=.*no-such-zone cannot be read/);
      const health = (await device.tools.call('get_device_health', {})) as { thermal_state: string | null; thermal_state_reason: string };
      assert.equal(health.thermal_state, null);
      assert.match(health.thermal_state_reason, /die temperature unknown/);
    } finally {
      await device.stop();
      await bus.close();
    }
  });
});
