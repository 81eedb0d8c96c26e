import { sampleFromMessages, type DeviceGaugeSample } from 'lookout/lib/metrics';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { DeviceRegistry } from '../../registry/src/service.js';
import { deviceHealth } from './device-health.js';

/**
 * The per-device gauges of the hub's /metrics: one sample per device /fleet/health lists (in the
 * cache or the registry, both bounded), with the same presence, recorder and failed-plugin
 * judgements. What an offline device last said is history: only `online` (0) is written for it.
 */
export function* deviceGaugeSamples(cache: BusCache, registry: DeviceRegistry, now: number): Generator<DeviceGaugeSample> {
  const registered = new Map(registry.list().map((d) => [d.deviceId, d]));
  for (const id of new Set([...cache.deviceIds(), ...registered.keys()])) {
    const snapshot = cache.device(id);
    const view = cache.view(id, now);
    const health = deviceHealth(id, snapshot, view, registered.get(id), now);
    if (!health.online) {
      yield sampleFromMessages(id, {}, { online: false });
      continue;
    }
    const latest = (key: string): unknown => snapshot?.latest.get(key)?.message;
    yield sampleFromMessages(
      id,
      { status: latest('status'), telemetry: latest('telemetry'), health: latest('health'), dets: latest('dets') },
      {
        online: true,
        recorder_writing: health.recorder.status === null ? null : health.recorder.status === 'recording',
        plugins_failed: health.plugins.failed.length,
      },
    );
  }
}
