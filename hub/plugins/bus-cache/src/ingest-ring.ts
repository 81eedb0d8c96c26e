import type { DebugRing } from '../../debug-ring/src/service.js';
import { cut, preview } from './ingest-text.js';
import type { BusSuffix } from 'lookout/core/contracts';
import type { DeviceCache } from './device-cache.js';
import { MAX_ISSUE_CHARS, type IngestEvents } from './ingest-events.js';

/**
 * What ingest tells the debug ring: every applied message (its lane), a device's presence and
 * storage_health changes, each refusal with its reason and a preview, and a device forgotten when
 * the cache is full.
 */
export function recordIngest(events: IngestEvents, ring: DebugRing): void {
  events.on('applied', (device, key, suffix, topic, message, previous, _retain, now) => {
    if (key === 'status' || key === 'health') recordChange(ring, device, key, topic, message, previous, now);
    ring.ingest(device.deviceId, topic, suffix, now);
  });
  events.on('refused', (r, payload, now) => {
    const details: Record<string, unknown> = { reason: r.reason, issue: r.issue, bytes: payload.length, preview: preview(payload) };
    const event = { kind: 'ingest_invalid', topic: r.topic.slice(0, 256), message: `${r.reason}: ${r.issue}`.slice(0, MAX_ISSUE_CHARS), details };
    ring.record(r.deviceId !== undefined ? { ...event, device_id: r.deviceId } : event, now);
  });
  events.on('unknownDevice', (topic, deviceId, _key, payload, now) => {
    const issue = `${cut(deviceId, 128)} is not a known device: no hello announced it and the registry does not name it`;
    ring.record(
      {
        kind: 'ingest_invalid',
        topic: topic.slice(0, 256),
        message: `unknown_device: ${issue}`.slice(0, MAX_ISSUE_CHARS),
        details: { reason: 'unknown_device', issue, bytes: payload.length, at: new Date(now).toISOString() },
      },
      now,
    );
  });
  events.on('evicted', (oldest, forDevice) =>
    ring.record({
      kind: 'hub',
      device_id: oldest.deviceId,
      message: `cache full: ${oldest.deviceId} (announced by hello only) forgotten for ${cut(forDevice, 128)}, which the registry names`,
    }),
  );
}

/** A device's state (status) or storage_health (health) that changed. */
function recordChange(
  ring: DebugRing,
  device: DeviceCache,
  key: BusSuffix,
  topic: string,
  message: Record<string, unknown>,
  previous: Record<string, unknown> | undefined,
  now: number,
): void {
  if (key === 'status' && previous?.state !== message.state) {
    ring.record(
      {
        kind: 'presence',
        device_id: device.deviceId,
        topic,
        message: `${device.deviceId} is ${String(message.state)}`,
        details: { state: message.state, previous: previous?.state ?? null },
      },
      now,
    );
  } else if (key === 'health' && previous?.storage_health !== message.storage_health) {
    ring.record(
      {
        kind: 'recorder_status',
        device_id: device.deviceId,
        topic,
        message: `storage_health ${JSON.stringify(previous?.storage_health ?? 'unknown')} → ${JSON.stringify(message.storage_health)}`,
        details: { storage_health: message.storage_health, previous: previous?.storage_health ?? null, storage: message.storage },
      },
      now,
    );
  }
}
