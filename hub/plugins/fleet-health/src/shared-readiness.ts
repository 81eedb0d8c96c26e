import type { DeviceReadinessView, Grade, ModuleGrade } from '../../readiness/src/service.js';
import type { DeviceHealthView } from './device-health.js';

/** A device's readiness in /fleet/health: the readiness plugin's grade when it runs, the bus cache's checks beside it. */
export interface ReadinessView {
  grade: Grade;
  /** `readiness`: the grade GET /fleet/readiness serves; `fleet-health`: no readiness plugin runs, graded from the bus cache alone. */
  source: 'readiness' | 'fleet-health';
  checked_at: string | null;
  stale: boolean | null;
  reason: string | null;
  modules: Record<string, ModuleGrade> | null;
  /** What the bus cache says now (presence, storage, plugins); with the readiness plugin, shown beside its grade. */
  checks: Record<string, boolean>;
  failing: string[];
}

/**
 * /fleet/health's readiness of a device. With the readiness plugin (`stored` given or the device
 * not checked yet) the grade is the one GET /fleet/readiness serves, so the two routes never
 * disagree: a device no check has graded yet is not_ready, as the fleet grade counts it. Without
 * it, the grade comes from the bus cache's checks as before.
 */
export function readinessOf(local: DeviceHealthView['readiness'], shared: { stored: DeviceReadinessView | undefined } | undefined): ReadinessView {
  const base = { checks: local.checks, failing: local.failing };
  if (!shared)
    return {
      grade: local.grade,
      source: 'fleet-health',
      checked_at: null,
      stale: null,
      reason: local.failing.length ? `failing: ${local.failing.join(', ')}` : null,
      modules: null,
      ...base,
    };
  const s = shared.stored;
  if (!s)
    return {
      grade: 'not_ready',
      source: 'readiness',
      checked_at: null,
      stale: null,
      reason: 'not checked yet by the readiness checks',
      modules: null,
      ...base,
    };
  const modules: Record<string, ModuleGrade> = {};
  for (const [name, m] of Object.entries(s.modules)) modules[name] = m.grade;
  return { grade: s.grade, source: 'readiness', checked_at: s.checked_at, stale: s.stale, reason: s.reason, modules, ...base };
}
