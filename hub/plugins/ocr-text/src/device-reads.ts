import { OcrReadSchema, type OcrRead } from '../../../../plugins/trocr/src/service.js';

/**
 * What the hub keeps of a read from the bus: the fields GET /fleet/ocr shows or merges by, nothing
 * else (the schema has already stripped unknown keys and bounded every string and array).
 */
export type StoredRead = Pick<
  OcrRead,
  'read_id' | 'track_id' | 'timestamp' | 'frame_time' | 'confidence' | 'class_id' | 'class_label' | 'det' | 'stop' | 'token_ids'
>;

/** A read as the hub keeps it: the route's fields only (crop, steps and timings are not shown). */
export function storedRead(read: OcrRead): StoredRead {
  const { read_id, track_id, timestamp, frame_time, confidence, class_id, class_label, det, stop, token_ids } = read;
  return { read_id, track_id, timestamp, frame_time, confidence, class_id, class_label, det, stop, token_ids };
}

/**
 * The reads each device published on events/ocr, as the hub's bus cache passed them on: the newest
 * `perDevice` of each device, for `maxDevices` devices (the one heard from longest ago leaves first).
 * A message that is not a read (another plugin's events/ocr, an older device, one padded past the
 * schema's bounds) is counted, not kept.
 */
export class DeviceReads {
  private readonly devices = new Map<string, StoredRead[]>();
  refused = 0;

  constructor(
    private readonly perDevice: number,
    private readonly maxDevices: number,
  ) {}

  add(deviceId: string, message: unknown): boolean {
    const parsed = OcrReadSchema.safeParse(message);
    if (!parsed.success) {
      this.refused++;
      return false;
    }
    const reads = this.devices.get(deviceId) ?? [];
    this.devices.delete(deviceId);
    this.devices.set(deviceId, reads);
    reads.unshift(storedRead(parsed.data));
    if (reads.length > this.perDevice) reads.length = this.perDevice;
    if (this.devices.size > this.maxDevices) this.devices.delete(this.devices.keys().next().value!);
    return true;
  }

  /** Newest first. */
  of(deviceId: string): readonly StoredRead[] {
    return this.devices.get(deviceId) ?? [];
  }
}
