import type { RegisteredDevice } from '../../registry/src/service.js';
import type { AuxOutcome } from './health-enrichment.js';

interface Entry {
  toolUrl: string | null;
  helloAt: number | null;
  at: number;
  outcome: Promise<AuxOutcome>;
}

/**
 * get_device_identity answers kept per device for health enrichment, for `ttlMs` and only while the
 * device has not announced itself again (a hello comes with every start and reconnect, so a device
 * restarted with a new certificate or ports is asked again at once). What identity gives (the
 * certificate fingerprint, listening ports, overlay mount) is fixed for a device process's life,
 * while each call costs a device about a millisecond of CPU on its one event loop: asked with every
 * health answer, it queued behind the health call and the peer-mesh status on the device and added
 * a whole call to the enriched answer. A call in flight is shared; a failure or an error answer is
 * not kept (the next health answer asks again). `ttlMs` 0: asked with every health answer.
 */
export class IdentityCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The device's identity answer: kept, or asked now with `ask(shared)`, where `shared` says the
   * answer may be handed to other callers (so the call must not end with the request asking).
   */
  get(device: RegisteredDevice, ask: (shared: boolean) => Promise<AuxOutcome>): Promise<AuxOutcome> {
    if (this.ttlMs <= 0) return ask(false);
    const now = this.now();
    const kept = this.entries.get(device.deviceId);
    if (kept && kept.toolUrl === device.toolUrl && kept.helloAt === device.lastHelloAt && now - kept.at < this.ttlMs) return kept.outcome;
    const entry: Entry = { toolUrl: device.toolUrl, helloAt: device.lastHelloAt, at: now, outcome: ask(true) };
    this.entries.delete(device.deviceId);
    this.entries.set(device.deviceId, entry);
    // The oldest go first: only devices whose health is being read need an entry.
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const forget = (): void => {
      if (this.entries.get(device.deviceId) === entry) this.entries.delete(device.deviceId);
    };
    entry.outcome.then((o) => o.status === 'ok' || forget(), forget);
    return entry.outcome;
  }

  /** Devices with an answer kept or on its way. */
  get size(): number {
    return this.entries.size;
  }
}
