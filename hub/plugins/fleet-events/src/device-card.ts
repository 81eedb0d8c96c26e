import { isObject } from 'lookout/core';
import type { BusCache, EntryView } from '../../bus-cache/src/service.js';

export type Presence = 'online' | 'offline' | 'stale';

/** What a fleet view card shows of a device, from the bus cache's entry. */
export interface DeviceCard {
  device_id: string;
  presence: Presence;
  online: boolean;
  /** When it went offline (its offline status or last-will arrived); null while online. */
  offline_since: string | null;
  last_seen_at: string | null;
  age_s: number;
  role: string | null;
  /** From its hello: the configuration layer and image it runs. */
  layer: string | null;
  image: string | null;
  labels: string[];
  thermal_state: string | null;
  die_temp_c: number | null;
  camera_fps: number | null;
  detection_fps: number | null;
  detection: string | null;
  person_count: number | null;
  storage_health: string | null;
  plugins: unknown[] | null;
}

export function presenceOf(view: EntryView): Presence {
  return presenceFrom(view.online, view.status?.state);
}

/** Online, else offline when its status says so (a will or a goodbye), else stale. */
function presenceFrom(online: boolean, statusState: unknown): Presence {
  if (online) return 'online';
  return statusState === 'offline' ? 'offline' : 'stale';
}

/**
 * The device's presence and thermal state as its card would show them, from the cache's entry
 * without building the whole view: checked on every status and telemetry message and on every poll
 * of the fleet, where the views were most of the hub's work past its ingest.
 */
export function watchedOf(cache: BusCache, deviceId: string, now: number): { presence: Presence; thermal: string | null } | undefined {
  // As applied: the poll sweeps the fleet twice a second, and a replica's held telemetry is at most its interval old.
  const d = cache.deviceAsApplied(deviceId);
  if (!d) return undefined;
  const status = d.latest.get('status')?.message;
  return {
    presence: presenceFrom(cache.isOnline(deviceId, now), status?.state),
    thermal: thermalStateOf(d.latest.get('telemetry')?.message ?? null, status ?? null),
  };
}

/** Telemetry comes every second, the retained status on changes: the newer reading first. */
function thermalStateOf(telemetryMessage: Record<string, unknown> | null, status: Record<string, unknown> | null): string | null {
  return str(objectOr(telemetryMessage?.telemetry).thermal_state) ?? str(status?.thermal_state);
}

export function cardOf(view: EntryView, hello?: Record<string, unknown>): DeviceCard {
  const telemetry = objectOr(view.payload?.telemetry);
  const status = view.status ?? {};
  return {
    device_id: view.device_id,
    presence: presenceOf(view),
    online: view.online,
    offline_since: view.offline_since,
    last_seen_at: view.last_seen_at,
    age_s: view.age_s,
    role: str(view.payload?.camera_id) ?? str(view.health?.role),
    layer: str(hello?.layer),
    image: str(hello?.image),
    labels: Array.isArray(hello?.labels) ? hello.labels.filter((l): l is string => typeof l === 'string') : [],
    thermal_state: thermalStateOf(view.payload, view.status),
    die_temp_c: num(telemetry.die_temp) ?? num(status.die_temp_c),
    camera_fps: num(telemetry.camera_fps),
    detection_fps: num(telemetry.fps),
    detection: view.detection,
    person_count: view.person_count,
    storage_health: str(view.health?.storage_health),
    plugins: Array.isArray(status.plugins) ? status.plugins : null,
  };
}

function objectOr(v: unknown): Record<string, unknown> {
  return isObject(v) ? v : {};
}
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
