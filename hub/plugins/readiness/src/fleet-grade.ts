import type { CertificateExpiry } from 'lookout/lib/tls';
import { READINESS_MODULES, type DeviceReadiness, type DeviceReadinessView, type FleetGrade, type Grade, type ReadinessModule } from './readiness-schemas.js';

/** A stored grade with its age at `now`; stale past `staleAfterMs` (the checks stopped refreshing it). */
export function viewOf(record: DeviceReadiness, now: number, staleAfterMs: number): DeviceReadinessView {
  const ageMs = Math.max(0, now - Date.parse(record.checked_at));
  return { ...record, age_s: Math.round(ageMs / 1000), stale: ageMs > staleAfterMs };
}

/**
 * The fleet's grade from its devices' grades: ready when every device is ready; not_ready when
 * none is ready or degraded, or no device is known; degraded otherwise. A device the hub knows
 * that no check graded yet counts as not_ready (nothing says it is ready). The hub's certificates
 * and their warnings (one ending within 30 days) ride along, and so do the devices' own warnings
 * (a device certificate ending within 30 days): a certificate about to end still works, so it warns
 * the operator without lowering the grade.
 */
export function fleetGrade(
  devices: DeviceReadinessView[],
  unchecked: string[],
  hub: { certificates: CertificateExpiry[]; warnings: string[] } = { certificates: [], warnings: [] },
): FleetGrade {
  const by_grade: Record<Grade, number> = { ready: 0, degraded: 0, not_ready: unchecked.length };
  for (const d of devices) by_grade[d.grade] += 1;
  const modules = {} as FleetGrade['modules'];
  for (const m of READINESS_MODULES) modules[m] = { ready: 0, degraded: 0, not_ready: 0, not_applicable: 0 };
  for (const d of devices) for (const m of Object.keys(d.modules) as ReadinessModule[]) modules[m][d.modules[m].grade] += 1;
  const count = devices.length + unchecked.length;
  const names = (g: Grade) => devices.filter((d) => d.grade === g).map((d) => d.device_id);
  let grade: Grade;
  let reason: string | null;
  if (count === 0) {
    grade = 'not_ready';
    reason = 'no device is known to the hub';
  } else if (by_grade.ready === count) {
    grade = 'ready';
    reason = null;
  } else {
    grade = by_grade.ready + by_grade.degraded === 0 ? 'not_ready' : 'degraded';
    const parts = [
      names('not_ready').length ? `not ready: ${list(names('not_ready'))}` : null,
      unchecked.length ? `not checked yet: ${list(unchecked)}` : null,
      names('degraded').length ? `degraded: ${list(names('degraded'))}` : null,
    ].filter((p): p is string => p !== null);
    reason = `${count - by_grade.ready} of ${count} devices not ready (${parts.join('; ')})`;
  }
  return {
    grade,
    reason,
    device_count: count,
    by_grade,
    unchecked,
    stale: devices.filter((d) => d.stale).map((d) => d.device_id),
    modules,
    certificates: hub.certificates,
    warnings: [...hub.warnings, ...devices.flatMap((d) => d.warnings ?? [])],
  };
}

function list(ids: string[]): string {
  return ids.length <= 20 ? ids.join(', ') : `${ids.slice(0, 20).join(', ')} and ${ids.length - 20} more`;
}
