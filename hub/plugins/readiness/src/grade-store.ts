import type { HubSharedState } from 'lookout/hub';
import type { Logger } from 'lookout/core';
import { DeviceReadinessSchema, type DeviceReadiness } from './readiness-schemas.js';

/** The HUB_SHARED scope of the grades: one record per device id, seen by every hub replica. */
export const READINESS_SCOPE = 'readiness';

/**
 * The devices' grades in the hub's shared state. A record is checked against its schema when read
 * (another replica, or an older hub, may have written it): one that does not parse is left out
 * and logged, never served.
 */
export class GradeStore {
  private readonly refused = new Set<string>();

  constructor(
    private readonly shared: HubSharedState,
    private readonly log: Logger,
  ) {}

  async all(): Promise<Map<string, DeviceReadiness>> {
    const out = new Map<string, DeviceReadiness>();
    for (const [id, raw] of await this.shared.entries(READINESS_SCOPE)) {
      const record = this.parse(id, raw);
      if (record) out.set(id, record);
    }
    return out;
  }

  async get(deviceId: string): Promise<DeviceReadiness | undefined> {
    return this.parse(deviceId, await this.shared.get(READINESS_SCOPE, deviceId));
  }

  /**
   * Stores a device's grades unless a newer check of it is stored already (two checks of one device
   * may overlap: a scheduled one and POST /fleet/validate, or two replicas). Read then write: two
   * replicas finishing together may both write, and the later write wins, which is a fresh grade.
   */
  async put(record: DeviceReadiness): Promise<void> {
    const stored = await this.get(record.device_id);
    if (stored && Date.parse(stored.checked_at) > Date.parse(record.checked_at)) return;
    await this.shared.put(READINESS_SCOPE, record.device_id, record);
  }

  delete(deviceId: string): Promise<void> {
    return this.shared.delete(READINESS_SCOPE, deviceId);
  }

  private parse(deviceId: string, raw: unknown): DeviceReadiness | undefined {
    if (raw === undefined) return undefined;
    const parsed = DeviceReadinessSchema.safeParse(raw);
    if (parsed.success && parsed.data.device_id === deviceId) {
      this.refused.delete(deviceId);
      return parsed.data;
    }
    if (!this.refused.has(deviceId)) {
      this.refused.add(deviceId);
      const issue = parsed.success ? 'device_id differs from its key' : `${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`;
      this.log.warn({ device_id: deviceId, issue }, 'a stored readiness record does not parse; left out');
    }
    return undefined;
  }
}
