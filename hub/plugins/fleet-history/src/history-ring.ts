import type { HistorySample } from './service.js';

/**
 * One device's samples in a fixed-size ring: one slot per step of the window, so a device costs
 * the same memory however often it reports. A reading in the step of the newest sample updates it
 * (person_count keeps the step's maximum: a person seen for one reading is not lost to the next).
 */
export class HistoryRing {
  private readonly slots: (HistorySample | undefined)[];
  private head = 0;
  private size = 0;

  constructor(
    readonly capacity: number,
    private readonly stepMs: number,
  ) {
    this.slots = new Array<HistorySample | undefined>(capacity);
  }

  /** Adds a reading; returns the sample it made or updated. */
  add(reading: HistorySample): HistorySample {
    const newest = this.newest();
    if (newest && Math.floor(newest.t / this.stepMs) === Math.floor(reading.t / this.stepMs) && reading.t >= newest.t) {
      newest.t = reading.t;
      newest.die_temp_c = reading.die_temp_c ?? newest.die_temp_c;
      newest.camera_fps = reading.camera_fps ?? newest.camera_fps;
      newest.detection_fps = reading.detection_fps ?? newest.detection_fps;
      newest.person_count = maxOf(newest.person_count, reading.person_count);
      return newest;
    }
    if (newest && reading.t < newest.t) return newest; // out of order (a retained message replayed): the plot only moves forward
    const sample = { ...reading };
    this.slots[(this.head + this.size) % this.capacity] = sample;
    if (this.size < this.capacity) this.size++;
    else this.head = (this.head + 1) % this.capacity;
    return sample;
  }

  /** Samples oldest first, strictly newer than `sinceMs`; copies, so a caller's changes stay its own. */
  list(sinceMs = -Infinity): HistorySample[] {
    const out: HistorySample[] = [];
    for (let i = 0; i < this.size; i++) {
      const s = this.slots[(this.head + i) % this.capacity]!;
      if (s.t > sinceMs) out.push({ ...s });
    }
    return out;
  }

  newest(): HistorySample | undefined {
    return this.size === 0 ? undefined : this.slots[(this.head + this.size - 1) % this.capacity];
  }
}

function maxOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}
