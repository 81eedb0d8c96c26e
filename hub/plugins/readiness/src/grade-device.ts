import { fiveMinuteCheck } from './five-minute-check.js';
import { gradeCrossA2a } from './grade-a2a.js';
import { gradeDepthFusion } from './grade-depth.js';
import { gradeDeviceIdentity } from './grade-identity.js';
import { gradeMcpHealth } from './grade-mcp.js';
import { gradeHermesMesh, gradePeerSidecar } from './grade-mesh.js';
import { gradePlayback, gradeRecorder } from './grade-recording.js';
import { gradeOnvif, gradeRtsp, gradeSnapshot } from './grade-stream.js';
import type { DeviceFacts } from './device-facts.js';
import { deviceCertificateEnd, deviceCertificateWarning } from './device-certificate-expiry.js';
import { READINESS_MODULES, type DeviceReadiness, type Grade, type ModuleResult, type ReadinessModule } from './readiness-schemas.js';

const RANK: Record<Grade, number> = { ready: 0, degraded: 1, not_ready: 2 };

export function worstGrade(grades: Iterable<Grade>): Grade {
  let worst: Grade = 'ready';
  for (const g of grades) if (RANK[g] > RANK[worst]) worst = g;
  return worst;
}

/** Longest reason a device record keeps (each module's own reason stays whole in its evidence). */
const MAX_REASON_CHARS = 2000;

/**
 * Grades every module from one check's facts. The device's grade is its worst applicable module
 * (not_applicable never lowers it); its reason names the modules that keep it from ready.
 */
export function gradeDevice(facts: DeviceFacts, checkedBy: string): DeviceReadiness {
  const check = fiveMinuteCheck(facts);
  const modules: Record<ReadinessModule, ModuleResult> = {
    device_identity_fp: gradeDeviceIdentity(facts),
    peer_sidecar: gradePeerSidecar(facts),
    hermes_mesh: gradeHermesMesh(facts),
    mcp_health: gradeMcpHealth(facts, check),
    cross_a2a_federation: gradeCrossA2a(facts),
    depth_fusion: gradeDepthFusion(facts),
    recorder: gradeRecorder(facts),
    playback: gradePlayback(facts),
    snapshot: gradeSnapshot(facts),
    onvif: gradeOnvif(facts),
    rtsp: gradeRtsp(facts),
  };
  const applicable = READINESS_MODULES.map((m) => [m, modules[m].grade] as const).filter(
    (e): e is readonly [ReadinessModule, Grade] => e[1] !== 'not_applicable',
  );
  const grade = worstGrade(applicable.map(([, g]) => g));
  const reason = grade === 'ready' ? null : reasonOf(modules);
  const certificate = deviceCertificateWarning(facts.deviceId, deviceCertificateEnd(facts));
  return {
    device_id: facts.deviceId,
    grade,
    reason,
    checked_at: new Date(facts.at).toISOString(),
    checked_by: checkedBy,
    modules,
    five_minute_check: check,
    ...(certificate ? { warnings: [certificate] } : {}),
  };
}

function reasonOf(modules: Record<ReadinessModule, ModuleResult>): string {
  const part = (grade: Grade) => READINESS_MODULES.filter((m) => modules[m].grade === grade).map((m) => `${m} (${modules[m].evidence.reason ?? grade})`);
  const text = [
    ['not_ready', part('not_ready')],
    ['degraded', part('degraded')],
  ]
    .filter(([, list]) => list.length > 0)
    .map(([g, list]) => `${g as string}: ${(list as string[]).join('; ')}`)
    .join(' | ');
  return text.length <= MAX_REASON_CHARS ? text : `${text.slice(0, MAX_REASON_CHARS - 3)}...`;
}
