import { z } from 'zod';
import type { PluginReport } from 'lookout/core';
import type { DeviceFilesAvailability } from '../../fleet-provision/src/service.js';
import { READINESS_MODULES, type DeviceReadiness, type ReadinessModule } from '../../readiness/src/service.js';

/** The remedies the hub knows, one per kind of failure a readiness module shows. */
export const REMEDIES = ['prune', 'announce', 'restart_plugin', 'reapply_layer', 'renew_certificate'] as const;
export type Remedy = (typeof REMEDIES)[number];

export const PlannedActionSchema = z.object({
  remedy: z.enum(REMEDIES),
  module: z.enum(READINESS_MODULES).describe('the failing readiness module it remedies'),
  reason: z.string().describe('what the module’s evidence said'),
  how: z
    .enum(['cmd_tool', 'ssh', 'manual'])
    .describe(
      "cmd_tool: the hub asks the device on devices/<id>/cmd/tool; ssh: the hub writes the device's files over SSH (fleet-provision's steps); manual: an operator step the hub cannot take",
    ),
  tool: z.string().nullable().describe('the device tool the command calls (cmd_tool)'),
  arguments: z.record(z.string(), z.unknown()).describe('its arguments'),
  manual: z.string().nullable().describe('the operator’s step (manual)'),
  manual_reason: z.string().nullable().describe('why the hub leaves it to the operator (a remedy it does over SSH when it can)'),
  via: z.string().nullable().describe('where it writes over SSH (ssh): user@host:port'),
});
export type PlannedAction = z.infer<typeof PlannedActionSchema>;

/** What planning reads of one device: its fresh grade, and the plugins it reports (status, health or hello on the bus). */
export interface DevicePlanInput {
  grade: DeviceReadiness;
  plugins: PluginReport[];
  /** The layer it announced (hello), for the re-apply. */
  layer: string | null;
  /**
   * Whether the hub can write the device's certificate and layer env over SSH (the fleet-provision
   * plugin), and why not; absent: nothing asked (every such remedy manual).
   */
  remote?: { certificate: DeviceFilesAvailability; layer: DeviceFilesAvailability } | undefined;
}

/** The remedies done over SSH when the hub can, manual otherwise. */
export const SSH_REMEDIES = ['reapply_layer', 'renew_certificate'] as const satisfies readonly Remedy[];

export const NO_SSH: DeviceFilesAvailability = { ok: false, reason: 'the hub has no fleet-provision plugin to write device files over SSH' };

const cmd = (remedy: Remedy, module: ReadinessModule, reason: string, tool: string, args: Record<string, unknown> = {}): PlannedAction => ({
  remedy,
  module,
  reason,
  how: 'cmd_tool',
  tool,
  arguments: args,
  manual: null,
  manual_reason: null,
  via: null,
});
/** Over SSH when the hub can (`remote.ok`), else the operator's step with the reason. */
const overSsh = (
  remedy: Remedy,
  module: ReadinessModule,
  reason: string,
  remote: DeviceFilesAvailability,
  args: Record<string, unknown>,
  step: string,
): PlannedAction =>
  remote.ok
    ? { remedy, module, reason, how: 'ssh', tool: null, arguments: args, manual: null, manual_reason: null, via: remote.via }
    : { remedy, module, reason, how: 'manual', tool: null, arguments: {}, manual: step, manual_reason: remote.reason, via: null };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The known remedy for each failing module (not_ready or degraded) of one device, in the order they
 * run: restarts first (a restarted recorder or identity is what the other remedies talk to), then
 * the prune, the re-announce and the manual steps. `modules` narrows to those modules. Pure: the same
 * grade plans the same actions, so the dry run is what the apply does.
 *  - recorder with storage CRITICAL: prune (the recorder's prune_recordings, as at CRITICAL)
 *  - a failed plugin (its module's evidence names it, else mcp_health, which degrades for any
 *    failed plugin): restart_plugin, the device host's tool; a plugin skipped for its dependency
 *    comes back with it; one skipped for another reason (its layer's config): re-apply the layer
 *    (over SSH, restarting the device's service when its env changed)
 *  - device_identity_fp with an ended or ending certificate: renew it (over SSH: a new certificate
 *    of the fleet CA), then announce, which reads the renewed file and tells the hub
 * The two SSH remedies are manual steps, with the reason, where `input.remote` says the hub cannot
 * write the device's files (no fleet-provision plugin, no fleet CA, no SSH address or credentials).
 *  - peer_sidecar listening but not announced, or mcp_health failing because the hub has no (current)
 *    registry entry of a device on the bus: announce (hello again)
 */
export function planDevice(input: DevicePlanInput, modules?: readonly ReadinessModule[]): PlannedAction[] {
  const { grade } = input;
  const wanted = (m: ReadinessModule) => !modules || modules.includes(m);
  const failing = READINESS_MODULES.filter((m) => wanted(m) && (grade.modules[m].grade === 'not_ready' || grade.modules[m].grade === 'degraded'));
  const reasonOf = (m: ReadinessModule) => grade.modules[m].evidence.reason ?? grade.modules[m].grade;
  const actions: PlannedAction[] = [];

  // A module whose evidence names a plugin owns that plugin's restart; the rest fall to mcp_health.
  const ownerOf = (plugin: string): ReadinessModule | undefined => {
    for (const m of READINESS_MODULES) {
      const value = grade.modules[m].evidence.value;
      if (isObject(value) && isObject(value.plugin) && value.plugin.name === plugin && grade.modules[m].grade !== 'ready') return m;
    }
    return grade.modules.mcp_health.grade !== 'ready' ? 'mcp_health' : undefined;
  };
  for (const p of input.plugins) {
    const owner = ownerOf(p.name);
    if (!owner || !failing.includes(owner)) continue;
    const why = `its ${p.name} plugin is ${p.state}${p.code ? ` (${p.code}${p.message ? `: ${p.message}` : ''})` : ''}`;
    if (p.state === 'failed') actions.push(cmd('restart_plugin', owner, why, 'restart_plugin', { name: p.name }));
    else if (p.state === 'skipped' && p.code !== 'dependency_failed' && !actions.some((a) => a.remedy === 'reapply_layer')) {
      const layer = input.layer ?? '<layer>';
      actions.push(
        overSsh(
          'reapply_layer',
          owner,
          why,
          input.remote?.layer ?? NO_SSH,
          { layer: input.layer },
          `lookout apply-layer ${layer} ${grade.device_id} --restart (writes the layer's env over SFTP and waits for its hello)`,
        ),
      );
    }
  }

  if (failing.includes('recorder')) {
    const value = grade.modules.recorder.evidence.value;
    if (isObject(value) && value.storage_health === 'CRITICAL') actions.push(cmd('prune', 'recorder', reasonOf('recorder'), 'prune_recordings'));
  }

  const identity = grade.modules.device_identity_fp;
  const identityValue = isObject(identity.evidence.value) ? identity.evidence.value : {};
  const daysLeft = typeof identityValue.cert_days_left === 'number' ? identityValue.cert_days_left : null;
  const certWarning = (grade.warnings ?? []).find((w) => w.includes('device certificate'));
  if (wanted('device_identity_fp') && ((failing.includes('device_identity_fp') && daysLeft !== null && daysLeft < 0) || certWarning)) {
    const why = daysLeft !== null && daysLeft < 0 ? reasonOf('device_identity_fp') : certWarning!;
    actions.push(
      overSsh(
        'renew_certificate',
        'device_identity_fp',
        why,
        input.remote?.certificate ?? NO_SSH,
        {},
        `lookout certs --ca-dir <fleet CA dir> --device ${grade.device_id} --data-root <staging dir> --renew, copy its data/config/shadow_peer.crt and .key to the device's /data/config/, then apply again: the announce reads the renewed certificate`,
      ),
      cmd('announce', 'device_identity_fp', 'the device announces the certificate it holds now', 'announce_identity'),
    );
  }

  if (!actions.some((a) => a.remedy === 'announce')) {
    const sidecar = grade.modules.peer_sidecar;
    const mcp = grade.modules.mcp_health;
    if (failing.includes('peer_sidecar') && sidecar.grade === 'degraded' && /hello announces/.test(sidecar.evidence.reason ?? '')) {
      actions.push(cmd('announce', 'peer_sidecar', reasonOf('peer_sidecar'), 'announce_identity'));
    } else if (failing.includes('mcp_health') && mcp.grade === 'not_ready' && /not in the registry|no tool URL/.test(mcp.evidence.reason ?? '')) {
      actions.push(cmd('announce', 'mcp_health', reasonOf('mcp_health'), 'announce_identity'));
    }
  }
  return actions;
}
