import { Gauge, type Registry } from 'prom-client';
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
const PLAIN: { key: Numeric; name: string; help: string }[] = [
  { key: 'online', name: 'lookout_device_online', help: 'Whether the device is online (1) or not (0)' },
  { key: 'die_temp_c', name: 'lookout_device_die_temperature_celsius', help: 'Die temperature of the device, degrees Celsius' },
  { key: 'fps', name: 'lookout_device_detection_fps', help: 'Frames through the detector per second, measured by the device' },
  { key: 'camera_fps', name: 'lookout_device_camera_fps', help: 'Frames the camera delivered per second, measured by the device' },
  { key: 'person_count', name: 'lookout_device_persons', help: 'Persons in the latest detections' },
  { key: 'storage_free_bytes', name: 'lookout_device_storage_free_bytes', help: 'Free bytes on the recordings volume' },
  { key: 'recorder_writing', name: 'lookout_device_recorder_writing', help: 'Whether the recorder is writing chunks (1) or not (0)' },
  { key: 'plugins_failed', name: 'lookout_device_plugins_failed', help: 'Plugins of the device in the failed state' },
];

/** Every metric name the device gauges expose (the Grafana dashboard's test checks against it). */
export const DEVICE_METRIC_NAMES = [...PLAIN.map((g) => g.name), 'lookout_device_storage_health', 'lookout_device_thermal_state'];

/**
 * Registers the per-device gauges on `registry`, filled at each scrape from `source`: the series
 * are exactly the devices `source` gives now, so a device that left the registry or the cache
 * leaves /metrics with it (bounded by the known devices, never by what was once seen). The two
 * states are state sets (one series per value, 1 for the current one), as Prometheus models enums.
 */
export function registerDeviceGauges(registry: Registry, source: () => Iterable<DeviceGaugeSample>): void {
  // One pass over the devices per scrape: the registry collects its metrics in registration order,
  // so the first gauge (online) takes the snapshot the others then read.
  let samples: DeviceGaugeSample[] = [];
  for (const { key, name, help } of PLAIN) {
    new Gauge({
      name,
      help,
      labelNames: ['device_id'],
      registers: [registry],
      collect(this: Gauge<'device_id'>) {
        if (key === PLAIN[0].key) samples = [...source()];
        this.reset();
        for (const s of samples) {
          const v = s[key];
          if (v === null) continue;
          this.set({ device_id: s.device_id }, typeof v === 'boolean' ? Number(v) : v);
        }
      },
    });
  }
  const stateSet = (name: string, help: string, label: string, values: readonly string[], of: (s: DeviceGaugeSample) => string | null): void => {
    new Gauge({
      name,
      help,
      labelNames: ['device_id', label],
      registers: [registry],
      collect(this: Gauge) {
        this.reset();
        for (const s of samples) {
          const value = of(s);
          if (value === null) continue;
          for (const v of values) this.set({ device_id: s.device_id, [label]: v }, v === value ? 1 : 0);
        }
      },
    });
  };
  stateSet('lookout_device_storage_health', 'Storage health of the device (1 for its current value)', 'health', STORAGE_HEALTH_VALUES, (s) =>
    (STORAGE_HEALTH_VALUES as readonly string[]).includes(s.storage_health ?? '') ? s.storage_health : null,
  );
  stateSet('lookout_device_thermal_state', 'Thermal state of the device die (1 for its current value)', 'state', THERMAL_STATE_VALUES, (s) =>
    (THERMAL_STATE_VALUES as readonly string[]).includes(s.thermal_state ?? '') ? s.thermal_state : null,
  );
}
