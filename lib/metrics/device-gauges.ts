import { STORAGE_HEALTH_VALUES, THERMAL_STATE_VALUES } from 'lookout/core/contracts';

/**
 * One device's state as an operator scrapes it, on the hub's `/metrics` (one per known device) and
 * on the device tool server's (its own). null: not known now (no message yet, device offline…);
 * its series is then left out rather than written as a made-up 0.
 */
export interface DeviceGaugeSample {
  device_id: string;
  online: boolean;
  die_temp_c: number | null;
  /** Frames through the detector per second, measured (telemetry `fps`). */
  fps: number | null;
  /** Frames the camera delivered per second, measured (telemetry `camera_fps`). */
  camera_fps: number | null;
  person_count: number | null;
  storage_health: string | null;
  storage_free_bytes: number | null;
  recorder_writing: boolean | null;
  thermal_state: string | null;
  plugins_failed: number | null;
}

const GIB = 1024 ** 3;

/** Bytes from a message's `free_gb` (the spec's unit), or null. */
export function gbToBytes(gb: unknown): number | null {
  return typeof gb === 'number' && Number.isFinite(gb) && gb >= 0 ? Math.round(gb * GIB) : null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * A sample from a device's latest messages (status, telemetry, health, dets), as the hub's cache
 * holds them and as the device published them. What the caller knows better (online, the
 * recorder, failed plugins) it passes in `known`.
 */
export function sampleFromMessages(
  deviceId: string,
  latest: { status?: unknown; telemetry?: unknown; health?: unknown; dets?: unknown },
  known: Pick<DeviceGaugeSample, 'online'> & Partial<Pick<DeviceGaugeSample, 'recorder_writing' | 'plugins_failed'>>,
): DeviceGaugeSample {
  const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
  const status = obj(latest.status);
  const block = obj(obj(latest.telemetry).telemetry);
  const health = obj(latest.health);
  const plugins = Array.isArray(status.plugins)
    ? (status.plugins as { state?: unknown }[])
    : Array.isArray(health.plugins)
      ? (health.plugins as { state?: unknown }[])
      : null;
  return {
    device_id: deviceId,
    online: known.online,
    die_temp_c: num(status.die_temp_c) ?? num(block.die_temp),
    fps: num(block.fps),
    camera_fps: num(block.camera_fps),
    person_count: num(obj(latest.dets).person_count),
    storage_health: typeof health.storage_health === 'string' ? health.storage_health : null,
    storage_free_bytes: gbToBytes(obj(health.storage).free_gb),
    recorder_writing: known.recorder_writing ?? null,
    thermal_state: typeof status.thermal_state === 'string' ? status.thermal_state : typeof block.thermal_state === 'string' ? block.thermal_state : null,
    plugins_failed: known.plugins_failed ?? (plugins ? plugins.filter((p) => p.state === 'failed').length : null),
  };
}

type Numeric = Exclude<keyof DeviceGaugeSample, 'device_id' | 'storage_health' | 'thermal_state'>;

/** The plain gauges: name, help and how a sample gives the value. */
export const PLAIN_DEVICE_GAUGES: readonly { key: Numeric; name: string; help: string }[] = [
  { key: 'online', name: 'lookout_device_online', help: 'Whether the device is online (1) or not (0)' },
  { key: 'die_temp_c', name: 'lookout_device_die_temperature_celsius', help: 'Die temperature of the device, degrees Celsius' },
  { key: 'fps', name: 'lookout_device_detection_fps', help: 'Frames through the detector per second, measured by the device' },
  { key: 'camera_fps', name: 'lookout_device_camera_fps', help: 'Frames the camera delivered per second, measured by the device' },
  { key: 'person_count', name: 'lookout_device_persons', help: 'Persons in the latest detections' },
  { key: 'storage_free_bytes', name: 'lookout_device_storage_free_bytes', help: 'Free bytes on the recordings volume' },
  { key: 'recorder_writing', name: 'lookout_device_recorder_writing', help: 'Whether the recorder is writing chunks (1) or not (0)' },
  { key: 'plugins_failed', name: 'lookout_device_plugins_failed', help: 'Plugins of the device in the failed state' },
];

/** The state sets: one series per value of `label`, 1 for the sample's current one (`key`). */
export const DEVICE_STATE_SETS: readonly { key: 'storage_health' | 'thermal_state'; name: string; help: string; label: string; values: readonly string[] }[] = [
  {
    key: 'storage_health',
    name: 'lookout_device_storage_health',
    help: 'Storage health of the device (1 for its current value)',
    label: 'health',
    values: STORAGE_HEALTH_VALUES,
  },
  {
    key: 'thermal_state',
    name: 'lookout_device_thermal_state',
    help: 'Thermal state of the device die (1 for its current value)',
    label: 'state',
    values: THERMAL_STATE_VALUES,
  },
];

/** Every metric name the device gauges expose (the Grafana dashboard's test checks against it). */
export const DEVICE_METRIC_NAMES = [...PLAIN_DEVICE_GAUGES.map((g) => g.name), ...DEVICE_STATE_SETS.map((g) => g.name)];

/** The content type of what deviceGaugesText writes: Prometheus' text format 0.0.4, as prom-client's registry writes it. */
export const PROMETHEUS_TEXT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * The per-device gauges in Prometheus' text format, one family after another (blank line between,
 * as prom-client writes them, so that the two can be joined): the series are exactly the devices
 * `samples` gives now, so a device that left the registry or the cache leaves /metrics with it
 * (bounded by the known devices, never by what was once seen). The two states are state sets (one
 * series per value, 1 for the current one), as Prometheus models enums.
 *
 * Written here rather than as prom-client gauges: each scrape set every series through a label
 * hash and then formatted it again, ~170 000 of them at 10 000 devices (280 ms of the hub's event
 * loop per scrape, a tenth of it left here).
 */
export function deviceGaugesText(samples: Iterable<DeviceGaugeSample>): string {
  const all = [...samples];
  const ids = all.map((s) => labelValue(s.device_id));
  // Lines joined once per family, each from pieces made once (a template per line was twice as slow).
  const families: string[] = [];
  for (const { key, name, help } of PLAIN_DEVICE_GAUGES) {
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`];
    const head = `${name}{device_id="`;
    for (let i = 0; i < all.length; i++) {
      const v = all[i][key];
      if (v !== null) lines.push(head + ids[i] + '"} ' + String(typeof v === 'boolean' ? Number(v) : v));
    }
    families.push(lines.join('\n'));
  }
  for (const { key, name, help, label, values } of DEVICE_STATE_SETS) {
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`];
    const head = `${name}{device_id="`;
    const tails = values.map((v) => ({ on: `",${label}="${v}"} 1`, off: `",${label}="${v}"} 0` }));
    for (let i = 0; i < all.length; i++) {
      const current = all[i][key];
      const at = current === null ? -1 : values.indexOf(current);
      if (at < 0) continue;
      for (let k = 0; k < tails.length; k++) lines.push(head + ids[i] + (k === at ? tails[k].on : tails[k].off));
    }
    families.push(lines.join('\n'));
  }
  return `${families.join('\n\n')}\n`;
}

/** A label value as the text format writes it: backslash, double quote and line feed escaped. */
function labelValue(v: string): string {
  return /[\\"\n]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : v;
}
