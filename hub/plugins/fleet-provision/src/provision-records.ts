import type { ProvisionRecord } from './provision-schemas.js';

/**
 * The provisioning records by device, kept in the hub state (through `onChange`): the steps of each
 * device's last provisioning and how each ended, so a half-done one is seen as such after a restart
 * and resumed by the next call. Records hold no secret: the auth of a call is never kept.
 */
/** Records kept at most: past it the least recently updated goes (a device id per call could otherwise grow the state without end). */
export const MAX_RECORDS = 5000;

export class ProvisionRecords {
  private readonly byDevice = new Map<string, ProvisionRecord>();

  constructor(private readonly onChange: () => void = () => undefined) {}

  restore(devices: Record<string, ProvisionRecord>): void {
    for (const [id, r] of Object.entries(devices)) this.byDevice.set(id, r);
  }

  get(deviceId: string): ProvisionRecord | undefined {
    return this.byDevice.get(deviceId);
  }

  list(): ProvisionRecord[] {
    return [...this.byDevice.values()].sort((a, b) => a.device_id.localeCompare(b.device_id));
  }

  put(record: ProvisionRecord): void {
    this.byDevice.delete(record.device_id);
    this.byDevice.set(record.device_id, structuredClone(record));
    // A Map keeps insertion order and a put re-inserts: the first key is the least recently updated.
    while (this.byDevice.size > MAX_RECORDS) this.byDevice.delete(this.byDevice.keys().next().value!);
    this.onChange();
  }

  delete(deviceId: string): void {
    if (this.byDevice.delete(deviceId)) this.onChange();
  }

  snapshot(): { devices: Record<string, ProvisionRecord> } {
    return { devices: Object.fromEntries(this.byDevice) };
  }
}
