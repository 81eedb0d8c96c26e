import type { BusSuffix } from 'lookout/core/contracts';
import { AdmissionRules } from './admission-rules.js';
import { DeviceCache } from './device-cache.js';
import { EarlyMessages, type Early, type HoldLimits } from './early-messages.js';
import type { IngestEvents } from './ingest-events.js';
import { InvalidTally } from './invalid-tally.js';

export interface DeviceLimits {
  maxTopics: number;
  maxAlerts: number;
  maxChunks: number;
}

/** A device entry just made, with the messages that waited for it and whether they go before the message that made it. */
export interface NewEntry {
  device: DeviceCache;
  waited: Early[] | undefined;
  waitedFirst: boolean;
}

/**
 * Stage (c), admission: which devices have an entry. Only a known device gets one: one that announced
 * a valid hello, or one an admission rule names (the registry file's devices, the bus identity's).
 * Anything else under `devices/<id>/` is counted and dropped, so a made-up id never appears in
 * /fleet/mqtt/latest. At most `maxDevices` entries are held; when full, a device a rule admits takes
 * the place of the longest-silent one no rule admits (hello-only), so a flood of made-up hellos cannot
 * lock out the operator's devices.
 *
 * A valid message of a device not known yet waits a short while (EarlyMessages, bounded): where a
 * device's messages come through different paths (hub replicas applying one shared stream), its
 * status can come before its hello.
 */
export class AdmissionStage {
  readonly devices = new Map<string, DeviceCache>();
  /** Bumped when a device entry is added or removed (the served id list is remade only then). */
  membership = 0;
  readonly rules = new AdmissionRules();
  readonly early: EarlyMessages;
  readonly invalid: InvalidTally;

  constructor(private readonly o: { maxDevices: number; deviceLimits: DeviceLimits; hold?: Partial<HoldLimits>; events: IngestEvents; now: () => number }) {
    this.early = new EarlyMessages(o.hold);
    this.invalid = new InvalidTally(this.devices, o.maxDevices);
  }

  /**
   * The entry for a valid message of a device without one: made (a hello, or a device a rule admits,
   * while there is room), or the message is held for the device (undefined) or refused (undefined).
   * `held`: the message already waited once (it is judged now as it would have been when it came).
   */
  enter(deviceId: string, key: BusSuffix, topic: string, payload: Buffer, retain: boolean, now: number, held: boolean): NewEntry | undefined {
    const admitted = this.rules.admits(deviceId);
    if (key !== 'hello' && !admitted) {
      // Its hello (or the registry's word) may still come: at start-up, or from another path (hub replicas).
      if (!held && this.early.hold(deviceId, topic, payload, retain, now, this.o.now())) return undefined;
      this.o.events.unknownDevice(topic, deviceId, key, payload, now);
      return undefined;
    }
    if (this.devices.size >= this.o.maxDevices && !(admitted && this.evictUnadmitted(deviceId))) {
      this.o.events.deviceRefused(deviceId);
      return undefined;
    }
    const device = new DeviceCache(deviceId, this.o.deviceLimits);
    const earlier = this.invalid.take(deviceId);
    if (earlier) device.invalid = earlier;
    this.devices.set(deviceId, device);
    this.membership++;
    // Known from now on: what waited for it is applied, after its hello (which the device sent
    // first), or else before this message (which came after them).
    return { device, waited: this.early.take(deviceId), waitedFirst: key !== 'hello' };
  }

  /** Entries reloaded from the hub's saved state: known devices, within `maxDevices`. */
  restore(devices: Iterable<DeviceCache>): number {
    let restored = 0;
    for (const d of devices) {
      if (this.devices.size >= this.o.maxDevices) break;
      if (this.devices.has(d.deviceId)) continue;
      this.devices.set(d.deviceId, d);
      this.membership++;
      restored++;
    }
    return restored;
  }

  /** Frees one place for an admitted device: the longest-silent entry that no rule admits goes. */
  private evictUnadmitted(forDevice: string): boolean {
    let oldest: DeviceCache | undefined;
    for (const d of this.devices.values()) {
      if ((oldest === undefined || d.newestAt < oldest.newestAt) && !this.rules.admits(d.deviceId)) oldest = d;
    }
    if (!oldest) return false;
    this.devices.delete(oldest.deviceId);
    this.membership++;
    this.o.events.evicted(oldest, forDevice);
    return true;
  }
}
