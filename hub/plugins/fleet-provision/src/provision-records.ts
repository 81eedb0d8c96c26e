import type { ProvisionRecord } from './provision-schemas.js';

/**
 * The provisioning records by device, kept in the hub state (through `onChange`): the steps of each
 * device's last provisioning and how each ended, so a half-done one is seen as such after a restart
 * and resumed by the next call. Records hold no secret: the auth of a call is never kept.
 */
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
    this.byDevice.set(record.device_id, structuredClone(record));
    this.onChange();
  }

  delete(deviceId: string): void {
    if (this.byDevice.delete(deviceId)) this.onChange();
  }

  snapshot(): { devices: Record<string, ProvisionRecord> } {
    return { devices: Object.fromEntries(this.byDevice) };
  }
}
