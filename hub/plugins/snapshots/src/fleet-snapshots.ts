import { mapBounded } from 'lookout/lib/limits';
import type { RegisteredDevice } from '../../registry/src/service.js';
import { failureOf } from './snapshot-chain.js';
import type { Snapshot } from './snapshot-types.js';

export type DeviceSnapshotResult =
  | { ok: true; source: Snapshot['source']; content_type: 'image/jpeg'; jpeg_base64: string; bytes: number; captured_at: string | null }
  | { ok: false; error: { code: string; message: string } };

/**
 * One snapshot per device, at most `concurrency` at once (each may run ffmpeg or an SSH fetch), in
 * the devices' order; a device's failure is its entry, never the whole answer's.
 */
export async function snapshotsOf(
  devices: readonly RegisteredDevice[],
  concurrency: number,
  take: (device: RegisteredDevice) => Promise<Snapshot>,
): Promise<Map<string, DeviceSnapshotResult>> {
  const results = await mapBounded(devices, concurrency, async (device): Promise<[string, DeviceSnapshotResult]> => {
    try {
      const s = await take(device);
      return [
        device.deviceId,
        {
          ok: true,
          source: s.source,
          content_type: 'image/jpeg',
          jpeg_base64: s.jpeg.toString('base64'),
          bytes: s.jpeg.length,
          captured_at: s.capturedAt ?? null,
        },
      ];
    } catch (err) {
      return [device.deviceId, { ok: false, error: failureOf(err) }];
    }
  });
  return new Map(results);
}

/** Devices of a role label (`shadow`), or every device; sorted by id. */
export function devicesOf(all: readonly RegisteredDevice[], shadow: string | undefined): RegisteredDevice[] {
  return all.filter((d) => shadow === undefined || d.labels.includes(shadow) || d.roles.includes(shadow)).sort((a, b) => a.deviceId.localeCompare(b.deviceId));
}
