import { HistoryRing } from './history-ring.js';

/**
 * The devices whose in-memory history is held: at most `maxDevices` rings. A device silent for
 * `forgetAfterMs` makes room for a newcomer; one still talking is never forgotten for it (with more
 * devices talking than held, forgetting the one silent longest made a 720-slot ring for every
 * message and threw it away before the device's next: no device kept any history).
 *
 * Recency costs nothing per message: the map keeps the order rings were made in, and only when
 * room is needed are the oldest looked at in turn: one heard lately goes to the back (a second
 * chance), the first one silent long enough is forgotten. When every held device is talking, no
 * newcomer looks again until the soonest of them could have fallen silent long enough. (Moving a
 * device to the back at each of its messages, 10 to 20 a second, was a map delete and insert per
 * message on the ingest path.)
 */
export class HistoryRings {
  private readonly rings = new Map<string, HistoryRing>();
  /** Before this time none of the held devices can have been silent for forgetAfterMs. */
  private fullUntil = -Infinity;

  constructor(
    private readonly capacity: number,
    private readonly stepMs: number,
    private readonly maxDevices: number,
    private readonly forgetAfterMs: number,
  ) {}

  get(deviceId: string): HistoryRing | undefined {
    return this.rings.get(deviceId);
  }

  deviceIds(): string[] {
    return [...this.rings.keys()];
  }

  /** The device's ring, made if there is room; undefined while every held device is still talking. */
  ringOf(deviceId: string, at: number): HistoryRing | undefined {
    const held = this.rings.get(deviceId);
    if (held) return held;
    if (this.rings.size >= this.maxDevices && !this.forgetOneSilent(at)) return undefined;
    const ring = new HistoryRing(this.capacity, this.stepMs);
    this.rings.set(deviceId, ring);
    return ring;
  }

  private forgetOneSilent(at: number): boolean {
    if (at < this.fullUntil) return false;
    let soonest = Infinity;
    for (let looked = this.rings.size; looked > 0; looked--) {
      const [deviceId, ring] = this.rings.entries().next().value!;
      this.rings.delete(deviceId);
      const heard = ring.newest()?.t ?? -Infinity;
      if (at - heard >= this.forgetAfterMs) return true;
      this.rings.set(deviceId, ring);
      soonest = Math.min(soonest, heard + this.forgetAfterMs);
    }
    this.fullUntil = soonest;
    return false;
  }
}
