import { OcrReadSchema, type OcrRead } from '../../../../plugins/trocr/src/service.js';

/**
 * The reads each device published on events/ocr, as the hub's bus cache passed them on: the newest
 * `perDevice` of each device, for `maxDevices` devices (the one heard from longest ago leaves first).
 * A message that is not a read (another plugin's events/ocr, an older device) is counted, not kept.
 */
export class DeviceReads {
  private readonly devices = new Map<string, OcrRead[]>();
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
    reads.unshift(parsed.data);
    if (reads.length > this.perDevice) reads.length = this.perDevice;
    if (this.devices.size > this.maxDevices) this.devices.delete(this.devices.keys().next().value!);
    return true;
  }

  /** Newest first. */
  of(deviceId: string): readonly OcrRead[] {
    return this.devices.get(deviceId) ?? [];
  }
}
