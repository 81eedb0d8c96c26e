import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import dieTemp from '../../../../plugins/die-temp/src/index.js';
import camera from '../../../../plugins/camera/src/index.js';
import { DieTemperatureToken, type DieTemperature } from '../../../../plugins/die-temp/src/service.js';
import { defaultSimTemperature, loadTempScript, temperatureAt } from '../../../../plugins/die-temp/src/sim-script.js';
import { readThermalZone } from '../../../../plugins/die-temp/src/zone-reader.js';
import { waitFor } from '../../../support/wait-for.js';

const logger = createLogger({ level: 'silent' });
const runtime = (dataDir: string) => ({ kind: 'device' as const, id: 'cam-t', dataDir, layer: 'layer0' as const });

describe('simulated temperature script', () => {
  const script = [
    { atS: 0, celsius: 45 },
    { atS: 10, celsius: 65 },
    { atS: 10, celsius: 70 },
    { atS: 20, celsius: 50 },
  ];
  it('interpolates linearly between points and holds outside them', () => {
    assert.equal(temperatureAt(script, -1), 45);
    assert.equal(temperatureAt(script, 0), 45);
    assert.equal(temperatureAt(script, 5), 55);
    assert.equal(temperatureAt(script, 2.5), 50);
    assert.equal(temperatureAt(script, 15), 60);
    assert.equal(temperatureAt(script, 20), 50);
    assert.equal(temperatureAt(script, 1000), 50);
  });
  it('steps at two points with the same time', () => {
    assert.equal(temperatureAt(script, 10), 65);
    assert.equal(temperatureAt(script, 10.5), 69);
  });
  it('is steady about 48 °C without a script', () => {
    for (const t of [0, 17, 30, 95, 3600]) assert.ok(Math.abs(defaultSimTemperature(t) - 48) <= 0.5, `t=${t}`);
  });
});

describe('temperature sources on disk', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-temp-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a script and refuses bad ones naming SIM_TEMP_SCRIPT', async () => {
    const good = join(dir, 'good.json');
    await writeFile(
      good,
      JSON.stringify([
        { atS: 0, celsius: 40 },
        { atS: 2, celsius: 44 },
      ]),
    );
    assert.deepEqual(await loadTempScript(good), [
      { atS: 0, celsius: 40 },
      { atS: 2, celsius: 44 },
    ]);
    const cases: [string, RegExp][] = [
      ['[', /not valid JSON|Unexpected end|JSON/],
      ['[]', /at least one point/],
      [
        JSON.stringify([
          { atS: 5, celsius: 40 },
          { atS: 1, celsius: 41 },
        ]),
        /in order of atS/,
      ],
      [JSON.stringify([{ atS: 0, celsius: 'hot' }]), /celsius/],
      [JSON.stringify({ atS: 0, celsius: 40 }), /expected array/],
    ];
    for (const [i, [text, why]] of cases.entries()) {
      const path = join(dir, `bad-${i}.json`);
      await writeFile(path, text);
      await assert.rejects(loadTempScript(path), (err: Error & { code: string }) => {
        assert.equal(err.code, 'config_invalid');
        assert.match(err.message, /^SIM_TEMP_SCRIPT=/);
        assert.match(err.message, why);
        return true;
      });
    }
    await assert.rejects(loadTempScript(join(dir, 'missing.json')), /SIM_TEMP_SCRIPT=.*cannot be read/);
  });

  it('reads millidegrees from a thermal zone file', async () => {
    const zone = join(dir, 'temp');
    await writeFile(zone, '51234\n');
    assert.equal(await readThermalZone(zone), 51.234);
    await writeFile(zone, '-5000\n');
    assert.equal(await readThermalZone(zone), -5);
    await writeFile(zone, 'hot\n');
    await assert.rejects(readThermalZone(zone), /does not hold millidegrees/);
    await assert.rejects(readThermalZone(join(dir, 'nope')), /DIE_TEMP_ZONE=.*nope cannot be read: ENOENT/);
  });

  it('follows the zone file and tells listeners; a missing zone leaves the temperature unknown with the reason', async () => {
    const zone = join(dir, 'zone0');
    await writeFile(zone, '47000\n');
    const bus = new MemoryBus();
    const loaded = await loadPlugins({
      plugins: [dieTemp],
      runtime: runtime(dir),
      bus,
      logger,
      env: { DIE_TEMP_SOURCE: 'zone', DIE_TEMP_ZONE: zone, DIE_TEMP_INTERVAL_MS: '20' },
    });
    try {
      const die = loaded.service<DieTemperature>(DieTemperatureToken)!;
      assert.equal(die.current(), 47);
      const heard: number[] = [];
      die.onReading((c) => heard.push(c));
      await writeFile(zone, '73500\n');
      await waitFor(() => heard.includes(73.5), 'the 73.5 °C reading', 3_000);
      assert.equal(die.current(), 73.5);
      await rm(zone);
      await waitFor(() => loaded.plugins[0].state === 'degraded', 'the degraded state', 3_000);
      assert.equal(die.current(), 73.5, 'the last good reading stays');
      await writeFile(zone, '60000\n');
      await waitFor(() => loaded.plugins[0].state === 'ok' && die.current() === 60, 'recovery at 60 °C', 3_000);
    } finally {
      await loaded.stop();
      await bus.close();
    }
    const absent = await loadPlugins({
      plugins: [dieTemp],
      runtime: runtime(dir),
      bus,
      logger,
      env: { DIE_TEMP_SOURCE: 'zone', DIE_TEMP_ZONE: join(dir, 'absent') },
    });
    try {
      assert.equal(absent.plugins[0].state, 'degraded');
      assert.equal(absent.service(DieTemperatureToken)!.current(), null);
      assert.match(absent.service(DieTemperatureToken)!.reason()!, /DIE_TEMP_ZONE=.*absent cannot be read/);
    } finally {
      await absent.stop();
    }
  });

  it('reads the real sensor unless the device runs simulated: a real device never reports a made-up temperature', async () => {
    const zone = join(dir, 'zone-default');
    await writeFile(zone, '61500\n');
    const real = await loadPlugins({ plugins: [dieTemp], runtime: runtime(dir), bus: new MemoryBus(), logger, env: { DIE_TEMP_ZONE: zone } });
    try {
      assert.equal(real.service(DieTemperatureToken)!.current()!, 61.5);
    } finally {
      await real.stop();
    }
    const blind = await loadPlugins({ plugins: [dieTemp], runtime: runtime(dir), bus: new MemoryBus(), logger, env: { DIE_TEMP_ZONE: join(dir, 'no-zone') } });
    try {
      assert.equal(blind.service(DieTemperatureToken)!.current(), null, 'never a made-up temperature');
      assert.match(blind.service(DieTemperatureToken)!.reason()!, /DIE_TEMP_ZONE.*--source sim or DIE_TEMP_SOURCE=sim/);
    } finally {
      await blind.stop();
    }
    const simulated = { ...runtime(dir), device: { source: 'sim' as const } };
    const sim = await loadPlugins({ plugins: [dieTemp], runtime: simulated, bus: new MemoryBus(), logger, env: { DIE_TEMP_ZONE: join(dir, 'no-zone') } });
    try {
      assert.ok(Math.abs(sim.service(DieTemperatureToken)!.current()! - 48) <= 0.5);
    } finally {
      await sim.stop();
    }
  });

  it('in sim mode the die follows the scene’s own temperature script (thermal-soak starts at 55 °C)', async () => {
    const simulated = { ...runtime(dir), device: { source: 'sim' as const } };
    const loaded = await loadPlugins({ plugins: [camera, dieTemp], runtime: simulated, bus: new MemoryBus(), logger, env: { SIM_SCENARIO: 'thermal-soak' } });
    try {
      assert.ok(Math.abs(loaded.service(DieTemperatureToken)!.current()! - 55) < 1.5);
    } finally {
      await loaded.stop();
    }
  });

  it('computes the thermal state from the die at layer 0 with the configured thresholds; bad thresholds leave it unknown, never the die unread', async () => {
    const zone = join(dir, 'zone-hot');
    await writeFile(zone, '95000\n');
    const hot = await loadPlugins({
      plugins: [dieTemp],
      runtime: runtime(dir),
      bus: new MemoryBus(),
      logger,
      env: { DIE_TEMP_SOURCE: 'zone', DIE_TEMP_ZONE: zone, DIE_TEMP_INTERVAL_MS: '20', THERMAL_CRITICAL_C: '96', THERMAL_WARN_C: '80' },
    });
    try {
      const die = hot.service(DieTemperatureToken)!;
      assert.deepEqual(die.thermal(), { state: 'THERMAL_WARN', reason: null });
      const heard: string[] = [];
      die.onThermalChange((state, celsius) => heard.push(`${state} ${celsius}`));
      await writeFile(zone, '97000\n');
      await waitFor(() => heard.length > 0, 'a thermal change', 3_000);
      assert.deepEqual(heard, ['THERMAL_CRITICAL 97']);
    } finally {
      await hot.stop();
    }
    const bad = await loadPlugins({
      plugins: [dieTemp],
      runtime: runtime(dir),
      bus: new MemoryBus(),
      logger,
      env: { DIE_TEMP_SOURCE: 'zone', DIE_TEMP_ZONE: zone, THERMAL_WARN_C: '90', THERMAL_CRITICAL_C: '85' },
    });
    try {
      const die = bad.service(DieTemperatureToken)!;
      assert.equal(die.current(), 97, 'the die is still read');
      const thermal = die.thermal();
      assert.equal(thermal.state, null);
      assert.equal(thermal.unknown, 'thresholds_invalid');
      assert.match(thermal.reason!, /THERMAL_WARN_C \(90 C\) must be below THERMAL_CRITICAL_C \(85 C\)/);
      assert.equal(bad.plugins[0].state, 'degraded');
    } finally {
      await bad.stop();
    }
  });

  it('refuses an unknown source naming the valid ones', async () => {
    const loaded = await loadPlugins({ plugins: [dieTemp], runtime: runtime(dir), bus: new MemoryBus(), logger, env: { DIE_TEMP_SOURCE: 'guess' } });
    const report = loaded.plugins[0];
    assert.deepEqual([report.state, report.code], ['failed', 'config_invalid']);
    assert.match(report.message!, /valid values: sim, zone/);
    await loaded.stop();
  });
});
