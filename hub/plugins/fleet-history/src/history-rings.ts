import { HistoryRing } from './history-ring.js';

/**
 * The devices whose in-memory history is held: at most `maxDevices` rings. A device silent for
 * `forgetAfterMs` makes room for a newcomer; one still talking is never forgotten for it (with more
 * devices talking than held, forgetting the one silent longest made a 720-slot ring for every
 * message and threw it away before the device's next: no device kept any history).
 *
 * Recency costs nothing per message (moving a device to the back of the map at each of its
 * messages, 10 to 20 a second, was a map delete and insert on the ingest path). When room is
 * needed, one pass over the held devices notes those silent long enough, to be forgotten one per
 * newcomer, and the soonest time any other could be: no newcomer looks again before it.
 */
export class HistoryRings {
  private readonly rings = new Map<string, HistoryRing>();
  /** Devices found silent long enough by the last pass, each checked again before it is forgotten. */
  private silent: string[] = [];
  /** Before this time none of the held devices but those in `silent` can have been silent for forgetAfterMs. */
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
    if (this.forgetNoted(at)) return true;
    if (at < this.fullUntil) return false;
    let soonest = Infinity;
    for (const [deviceId, ring] of this.rings) {
      const forgettableAt = this.heard(ring) + this.forgetAfterMs;
      if (at >= forgettableAt) this.silent.push(deviceId);
      else soonest = Math.min(soonest, forgettableAt);
    }
    this.silent.reverse(); // taken from the end: the device held longest goes first
    this.fullUntil = soonest;
    return this.forgetNoted(at);
  }

  /** Forgets the next device noted silent that still is (one heard again since is left). */
  private forgetNoted(at: number): boolean {
    for (let deviceId = this.silent.pop(); deviceId !== undefined; deviceId = this.silent.pop()) {
      const ring = this.rings.get(deviceId);
      if (ring && at - this.heard(ring) >= this.forgetAfterMs) {
        this.rings.delete(deviceId);
        return true;
      }
      // Heard again since the pass: it could not be forgotten before that pass's fullUntil either.
      if (ring) this.fullUntil = Math.min(this.fullUntil, this.heard(ring) + this.forgetAfterMs);
    }
    return false;
  }

  private heard(ring: HistoryRing): number {
    return ring.newest()?.t ?? -Infinity;
  }
}
