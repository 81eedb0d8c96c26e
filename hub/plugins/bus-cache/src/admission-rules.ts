import type { DeviceAdmission } from '../../registry/src/service.js';

/** The rules of DEVICE_ADMISSION: a device is admitted when any of them says so. */
export class AdmissionRules implements DeviceAdmission {
  private readonly rules = new Set<(deviceId: string) => boolean>();

  admitWhen(rule: (deviceId: string) => boolean): () => void {
    // A fresh wrapper per call, so that adding one rule twice gives two removals that each remove one.
    const entry = (id: string) => rule(id);
    this.rules.add(entry);
    return () => this.rules.delete(entry);
  }

  admits(deviceId: string): boolean {
    for (const rule of this.rules) {
      try {
        if (rule(deviceId)) return true;
      } catch {
        // A failing rule admits nothing; the others still decide.
      }
    }
    return false;
  }
}
