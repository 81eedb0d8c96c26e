import { countInvalid, type DeviceCache } from './device-cache.js';
import type { Refusal } from './ingest-events.js';
import type { InvalidStats } from './service.js';

/**
 * Refusals counted per device and topic: on the device's entry when it has one, else in a bounded
 * table (oldest forgotten first) that a device entry takes over when the device becomes known.
 */
export class InvalidTally {
  /** Refusals that no device could be charged with (no device in the topic, or forgotten from the table). */
  untracked = 0;
  private readonly invalidOnly = new Map<string, Map<string, InvalidStats>>();

  constructor(
    private readonly devices: ReadonlyMap<string, DeviceCache>,
    private readonly maxDevices: number,
  ) {}

  count(r: Refusal, now: number): void {
    if (r.deviceId === undefined) {
      this.untracked++;
      return;
    }
    const device = this.devices.get(r.deviceId);
    if (device) device.countInvalid(r.suffix, r.reason, now, r.issue);
    else this.countUnknown(r.deviceId, r, now);
  }

  /** What was counted for a device before it had an entry; forgotten here. */
  take(deviceId: string): Map<string, InvalidStats> | undefined {
    const stats = this.invalidOnly.get(deviceId);
    if (stats) this.invalidOnly.delete(deviceId);
    return stats;
  }

  private countUnknown(deviceId: string, r: Refusal, now: number): void {
    let stats = this.invalidOnly.get(deviceId);
    if (!stats) {
      if (this.invalidOnly.size >= this.maxDevices) {
        const oldest = this.invalidOnly.keys().next().value;
        if (oldest !== undefined) this.invalidOnly.delete(oldest);
        this.untracked++;
      }
      this.invalidOnly.set(deviceId, (stats = new Map<string, InvalidStats>()));
    }
    countInvalid(stats, r.suffix, r.reason, now, r.issue);
  }
}
