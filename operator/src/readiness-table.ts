/**
 * GET /fleet/readiness as a terminal table: the fleet's grade, one row per device with each
 * module's grade, then why each device is not ready, module by module.
 */

interface ModuleView {
  grade: string;
  evidence: { reason: string | null };
}
export interface ReadinessBody {
  fleet: { grade: string; reason: string | null; device_count: number; unchecked: string[]; stale: string[]; warnings?: string[] };
  devices: Record<string, { grade: string; checked_at: string; age_s: number; stale: boolean; modules: Record<string, ModuleView> }>;
  modules: string[];
}

/** Short column titles, in the order the hub lists its modules; a module this CLI does not know is shown by name. */
const TITLES: Record<string, string> = {
  device_identity_fp: 'ident',
  peer_sidecar: 'sidecar',
  hermes_mesh: 'mesh',
  mcp_health: 'mcp',
  cross_a2a_federation: 'a2a',
  depth_fusion: 'depth',
  recorder: 'rec',
  playback: 'play',
  snapshot: 'snap',
  onvif: 'onvif',
  rtsp: 'rtsp',
};

const CELL: Record<string, string> = { ready: 'ok', degraded: 'DEG', not_ready: 'NOT', not_applicable: '-' };

export function readinessTable(body: ReadinessBody): string {
  const lines = [`fleet ${body.fleet.grade}${body.fleet.reason ? `: ${body.fleet.reason}` : ''}`];
  const ids = Object.keys(body.devices).sort();
  if (ids.length > 0) {
    const head = ['device', 'grade', 'checked', ...body.modules.map((m) => TITLES[m] ?? m)];
    const rows = ids.map((id) => {
      const d = body.devices[id];
      return [id, d.grade, `${d.age_s}s ago${d.stale ? ' (stale)' : ''}`, ...body.modules.map((m) => CELL[d.modules[m]?.grade ?? ''] ?? '?')];
    });
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const format = (cells: string[]) =>
      cells
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd();
    lines.push('', format(head), ...rows.map(format));
    lines.push('', `ok ready, DEG degraded, NOT not ready, - not applicable`);
  }
  for (const id of ids) {
    const d = body.devices[id];
    const why = body.modules.filter((m) => d.modules[m] && d.modules[m].grade !== 'ready' && d.modules[m].grade !== 'not_applicable');
    if (why.length === 0) continue;
    lines.push('', `${id} (${d.grade}):`);
    for (const m of why) lines.push(`  ${m} ${d.modules[m].grade}: ${d.modules[m].evidence.reason ?? ''}`);
  }
  for (const w of body.fleet.warnings ?? []) lines.push('', `warning: ${w}`);
  if (body.fleet.unchecked.length > 0) lines.push('', `not checked yet: ${body.fleet.unchecked.join(', ')} (POST /fleet/validate checks now)`);
  return lines.join('\n');
}

/** The exit status of `lookout readiness`: 0 when the fleet is ready, 1 not ready, 3 degraded (2 is a usage error). */
export function readinessExitCode(grade: string): number {
  return grade === 'ready' ? 0 : grade === 'degraded' ? 3 : 1;
}
