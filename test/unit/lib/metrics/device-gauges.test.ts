import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { registerDeviceGauges, sampleFromMessages, type DeviceGaugeSample } from '../../../../lib/metrics/device-gauges.js';

const sample = (id: string, overrides: Partial<DeviceGaugeSample> = {}): DeviceGaugeSample => ({
  ...sampleFromMessages(id, {}, { online: true }),
  ...overrides,
});

test('the series are the devices the source gives at this scrape: one that leaves, leaves /metrics', async () => {
  const registry = new Registry();
  let devices = [sample('cam-1', { die_temp_c: 51, thermal_state: 'THERMAL_WARN' }), sample('cam-2', { storage_health: 'CRITICAL' })];
  registerDeviceGauges(registry, () => devices);
  const first = await registry.metrics();
  assert.match(first, /^lookout_device_online\{device_id="cam-2"\} 1$/m);
  assert.match(first, /^lookout_device_die_temperature_celsius\{device_id="cam-1"\} 51$/m);
  assert.match(first, /^lookout_device_thermal_state\{device_id="cam-1",state="THERMAL_WARN"\} 1$/m);
  assert.match(first, /^lookout_device_thermal_state\{device_id="cam-1",state="NORMAL"\} 0$/m);
  assert.match(first, /^lookout_device_storage_health\{device_id="cam-2",health="CRITICAL"\} 1$/m);
  // Unknown is left out, not a made-up 0.
  assert.doesNotMatch(first, /lookout_device_die_temperature_celsius\{device_id="cam-2"\}/);
  devices = [devices[0]];
  const second = await registry.metrics();
  assert.doesNotMatch(second, /cam-2/);
  assert.match(second, /device_id="cam-1"/);
});

test('a sample reads the spec messages: die temperature, fps, persons, storage in bytes, failed plugins', () => {
  const s = sampleFromMessages(
    'cam-1',
    {
      status: { state: 'online', die_temp_c: 48.5, thermal_state: 'NORMAL', plugins: [{ state: 'ok' }, { state: 'failed' }] },
      telemetry: { telemetry: { die_temp: 40, fps: 9, camera_fps: 10 } },
      health: { storage_health: 'WARNING', storage: { free_gb: 2 } },
      dets: { person_count: 3 },
    },
    { online: true },
  );
  assert.deepEqual(
    { ...s },
    {
      device_id: 'cam-1',
      online: true,
      die_temp_c: 48.5,
      fps: 9,
      camera_fps: 10,
      person_count: 3,
      storage_health: 'WARNING',
      storage_free_bytes: 2 * 1024 ** 3,
      recorder_writing: null,
      thermal_state: 'NORMAL',
      plugins_failed: 1,
    },
  );
});
