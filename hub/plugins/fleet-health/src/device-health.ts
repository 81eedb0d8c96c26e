import type { DeviceSnapshot, EntryView } from '../../bus-cache/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import { recorderState, type RecorderView } from './recorder-state.js';

export type Presence = 'online' | 'offline' | 'stale' | 'unknown';
export type Grade = 'ready' | 'degraded' | 'not_ready';

export interface DeviceHealthView {
  device_id: string;
  presence: Presence;
  online: boolean;
  stale: boolean;
  age_s: number | null;
  thermal_state: string | null;
  die_temp_c: number | null;
  storage_health: string | null;
  storage: Record<string, unknown> | null;
  recorder: RecorderView;
  readiness: { grade: Grade; checks: Record<string, boolean>; failing: string[] };
  /** Plugins the device reports failed or skipped (newest of status and health), with their code and message. */
  plugins: { failed: PluginProblem[]; skipped: PluginProblem[] };
}

export interface PluginProblem {
  name: string;
  code: string | null;
  message: string | null;
}

/**
 * One device's recorder, storage and readiness health, from what the bus cache holds: the latest
 * status (presence, thermal state), health (storage_health, storage summary) and data_manifest
 * (chunks), plus whether the hub can reach it now: the registry gives it a tool URL and it is online
 * (a killed device keeps its registry entry, but nothing answers there).
 */
export function deviceHealth(
  id: string,
  snapshot: DeviceSnapshot | undefined,
  view: EntryView | undefined,
  registered: RegisteredDevice | undefined,
  now: number = Date.now(),
): DeviceHealthView {
  const status = view?.status ?? null;
  const health = view?.health ?? null;
  const healthAt = snapshot?.latest.get('health')?.receivedAt;
  const plugins = pluginProblems(snapshot);
  const presence: Presence = !view ? 'unknown' : status?.state === 'offline' ? 'offline' : view.stale ? 'stale' : view.online ? 'online' : 'unknown';
  const storage = (health?.storage as Record<string, unknown> | undefined) ?? null;
  const storageHealth = typeof health?.storage_health === 'string' ? health.storage_health : null;
  const checks = {
    online: presence === 'online',
    status: status !== null,
    health: health !== null,
    telemetry: view?.payload != null,
    storage_ok: storageHealth === 'OK',
    reachable: presence === 'online' && registered?.toolUrl != null,
    plugins_ok: plugins.failed.length === 0,
  };
  const failing = Object.entries(checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k);
  const grade: Grade = !checks.online || storageHealth === 'CRITICAL' ? 'not_ready' : failing.length === 0 ? 'ready' : 'degraded';
  return {
    device_id: id,
    presence,
    online: checks.online,
    stale: view?.stale ?? true,
    age_s: view?.age_s ?? null,
    thermal_state: typeof status?.thermal_state === 'string' ? status.thermal_state : null,
    die_temp_c: typeof status?.die_temp_c === 'number' ? status.die_temp_c : null,
    storage_health: storageHealth,
    storage,
    recorder: recorderState({
      presence,
      chunkCount: typeof storage?.chunk_count === 'number' ? storage.chunk_count : null,
      latestChunk: view?.recent_chunks[0] ?? null,
      lastHealthAt: healthAt ?? null,
      now,
    }),
    readiness: { grade, checks, failing },
    plugins,
  };
}

/** Failed and skipped plugins from whichever of status and health the device sent last. */
function pluginProblems(snapshot: DeviceSnapshot | undefined): { failed: PluginProblem[]; skipped: PluginProblem[] } {
  const reports = [snapshot?.latest.get('status'), snapshot?.latest.get('health')]
    .filter((e) => e !== undefined && Array.isArray(e.message.plugins))
    .sort((a, b) => b!.receivedAt - a!.receivedAt)[0]?.message.plugins as { name: string; state: string; code?: string; message?: string }[] | undefined;
  const pick = (state: string): PluginProblem[] =>
    (reports ?? []).filter((p) => p.state === state).map((p) => ({ name: p.name, code: p.code ?? null, message: p.message ?? null }));
  return { failed: pick('failed'), skipped: pick('skipped') };
}
