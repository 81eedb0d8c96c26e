import assert from 'node:assert/strict';
import { test } from 'node:test';
import { promtoolCheckMetrics } from '../../../support/promtool.js';
import { deviceGaugesText, sampleFromMessages, type DeviceGaugeSample } from '../../../../lib/metrics/device-gauges.js';

const sample = (id: string, overrides: Partial<DeviceGaugeSample> = {}): DeviceGaugeSample => ({
  ...sampleFromMessages(id, {}, { online: true }),
  ...overrides,
});

test('the series are the devices given at this scrape: one that leaves, leaves /metrics', () => {
  let devices = [sample('cam-1', { die_temp_c: 51, thermal_state: 'THERMAL_WARN' }), sample('cam-2', { storage_health: 'CRITICAL' })];
  const first = deviceGaugesText(devices);
  assert.match(first, /^lookout_device_online\{device_id="cam-2"\} 1$/m);
  assert.match(first, /^lookout_device_die_temperature_celsius\{device_id="cam-1"\} 51$/m);
  assert.match(first, /^lookout_device_thermal_state\{device_id="cam-1",state="THERMAL_WARN"\} 1$/m);
  assert.match(first, /^lookout_device_thermal_state\{device_id="cam-1",state="NORMAL"\} 0$/m);
  assert.match(first, /^lookout_device_storage_health\{device_id="cam-2",health="CRITICAL"\} 1$/m);
  // Unknown is left out, not a made-up 0; so is a state outside the contract's values.
  assert.doesNotMatch(first, /lookout_device_die_temperature_celsius\{device_id="cam-2"\}/);
  assert.doesNotMatch(deviceGaugesText([sample('cam-3', { thermal_state: 'MELTING' })]), /lookout_device_thermal_state\{/);
  devices = [devices[0]];
  const second = deviceGaugesText(devices);
  assert.doesNotMatch(second, /cam-2/);
  assert.match(second, /device_id="cam-1"/);
});

test('label values are escaped, and the text passes promtool (a strict parse of the exposition format)', async () => {
  const odd = 'cam-"2"\\x\ny';
  const text = deviceGaugesText([
    sample('cam-1', { die_temp_c: 51.25, thermal_state: 'THERMAL_WARN', storage_free_bytes: 2 * 1024 ** 3, recorder_writing: true }),
    sample(odd, { storage_health: 'CRITICAL', plugins_failed: 0, online: false }),
  ]);
  assert.match(text, /^lookout_device_online\{device_id="cam-\\"2\\"\\\\x\\ny"\} 0$/m);
  assert.match(text, /^lookout_device_storage_free_bytes\{device_id="cam-1"\} 2147483648$/m);
  assert.match(text, /^lookout_device_recorder_writing\{device_id="cam-1"\} 1$/m);
  const check = await promtoolCheckMetrics(text);
  assert.equal(check.code, 0, check.output);
  assert.equal(check.output.trim(), '', 'promtool has no complaint');
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
