import { z } from 'zod';
import { DeviceIdSchema, PluginReportSchema, ToolCommandSchema } from 'lookout/core/contracts';
import { BODY_ROUTE_ERRORS, LookoutError, definePlugin, type PluginReport } from 'lookout/core';
import { mapBounded } from 'lookout/lib/limits';
import { BUS_CACHE, type BusCache } from '../../bus-cache/src/service.js';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { FLEET_PROVISION, type FleetProvision } from '../../fleet-provision/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { GradeSchema, ModuleGradeSchema, READINESS_GRADES, READINESS_MODULES, type DeviceReadiness } from '../../readiness/src/service.js';
import { DeviceCommands, RESPONSES_FILTER } from './device-commands.js';
import { PlannedActionSchema, REMEDIES, NO_SSH, SSH_REMEDIES, planDevice, type DevicePlanInput } from './remedy-plan.js';
import { regradeSettled } from './regrade.js';
import { runDeviceActions, type ActionOutcome } from './run-remedies.js';

const RemediateBody = z.strictObject({
  apply: z.boolean().default(false).describe('false (the default): a dry run, answering what would be done and changing nothing; true: do it'),
  devices: z.array(DeviceIdSchema).min(1).max(500).optional().describe('only these devices (every known device without it)'),
  modules: z.array(z.enum(READINESS_MODULES)).min(1).optional().describe('only the failures of these readiness modules'),
});

const ActionReportSchema = PlannedActionSchema.extend({
  status: z
    .enum(['planned', 'done', 'failed', 'manual'])
    .describe('planned: the dry run; done: the device said ok (or the SSH write ended); failed: its error; manual: left to the operator'),
  result: z.unknown().describe('the device’s answer, or what the SSH write changed (done)'),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  module_after: ModuleGradeSchema.nullable().describe('the module’s grade when the device was graded again after the apply (null in a dry run)'),
});

const DeviceReportSchema = z.object({
  device_id: z.string(),
  grade_before: GradeSchema.nullable().describe('its grade from the check that planned (null: it could not be checked)'),
  reason_before: z.string().nullable(),
  actions: z.array(ActionReportSchema),
  grade_after: GradeSchema.nullable().describe('graded again after the apply; null in a dry run or when the check failed'),
  reason_after: z.string().nullable(),
});

const RemediateResponse = z.object({
  dry_run: z.boolean(),
  devices: z.array(DeviceReportSchema).describe('every device asked for (or known), with the actions for its failing modules; none when it is ready'),
  summary: z.object({
    devices: z.number().int(),
    devices_with_actions: z.number().int(),
    actions: z.number().int(),
    by_remedy: z.record(z.enum(REMEDIES), z.number().int()),
    failed: z.number().int(),
    manual: z.number().int(),
    over_ssh: z.number().int().describe("actions that write the device's files over SSH"),
  }),
  generated_at: z.string(),
});
type DeviceReport = z.infer<typeof DeviceReportSchema>;

const PluginListSchema = z.array(PluginReportSchema);

/**
 * Fleet remediation (spec 01 names POST /fleet/remediate): for every failing readiness module of
 * every device, the known remedy (remedy-plan.ts), as a Kubernetes-style plan first: a dry run by
 * default answers what would be done to which devices and changes nothing. With `apply: true` each
 * command goes to the device on its cmd topic, is audited in the debug ring, and the device is
 * graded again, so the answer says whether it worked. Renewing a certificate and re-applying a layer
 * write the device's files over SSH through the fleet-provision plugin where the hub can (its fleet
 * CA, the device's SSH address, its credentials); else they are the operator's step, with the reason.
 */
export default definePlugin({
  name: 'remediate',
  version: '1.0.0',
  core: '^1',
  description: 'The known remedy for each failing readiness module: dry run by default, applied through the devices’ cmd topics (POST /fleet/remediate)',
  requires: [READINESS_GRADES, BUS_CACHE, DEVICE_REGISTRY],
  optionalRequires: [DEBUG_RING, FLEET_PROVISION],
  topics: [
    {
      suffix: 'devices/+/cmd/tool',
      qos: 1,
      schema: ToolCommandSchema,
      description: 'remedies that call a device tool (restart_plugin, prune_recordings, announce_identity)',
    },
  ],
  subscriptions: [RESPONSES_FILTER],
  config: z.object({
    /** How long a device has to answer one remedy's command on its cmd topic. */
    REMEDIATE_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
    /** After a remedy, how long the hub waits for what it caused to show: an announce's new hello, a remedied module no longer not_ready. */
    REMEDIATE_SETTLE_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
    /** Devices remedied at once. */
    REMEDIATE_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  }),
  routes: [
    {
      method: 'POST',
      path: '/fleet/remediate',
      summary:
        'For each failing readiness module of each device, the known remedy (prune on storage CRITICAL, re-announce, restart a failed plugin, re-apply the layer, renew the certificate): a dry run by default; with apply: true, done through the cmd topics, audited, and graded again',
      body: RemediateBody,
      response: RemediateResponse,
      errors: ['target_unknown', ...BODY_ROUTE_ERRORS],
    },
  ],
  async start(ctx) {
    const c = ctx.config;
    const readiness = ctx.services.get(READINESS_GRADES);
    const cache = ctx.services.get(BUS_CACHE);
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const commands = new DeviceCommands(ctx.bus, c.REMEDIATE_COMMAND_TIMEOUT_MS);
    await commands.start();
    ctx.onStop(() => commands.stop());

    const known = () => [...new Set([...registry.list().map((d) => d.deviceId), ...cache.deviceIds()])].sort();

    ctx.routes.handle<unknown, z.output<typeof RemediateBody>>('POST', '/fleet/remediate', async ({ body, signal }) => {
      const all = known();
      const unknown = (body.devices ?? []).filter((id) => !all.includes(id));
      if (unknown.length) throw new LookoutError('target_unknown', `the hub knows no device ${unknown.join(', ')}`, { details: { devices: unknown } });
      const ids = body.devices ? [...new Set(body.devices)] : all;
      const modules = body.modules;

      // Planned from a fresh check, so that the plan is about the device as it is now.
      const before = new Map((await readiness.validate(ids, signal)).map((g) => [g.device_id, g]));
      const provision = ctx.services.optional(FLEET_PROVISION);
      const plans = await Promise.all(
        ids.map(async (id) => {
          const grade = before.get(id);
          if (!grade) return { id, grade, actions: [] };
          const input: DevicePlanInput = { grade, plugins: pluginsOf(cache, id), layer: layerOf(cache, id) };
          let actions = planDevice(input, modules);
          // Only a plan with an SSH remedy asks whether the hub can write the device's files.
          if (actions.some((a) => (SSH_REMEDIES as readonly string[]).includes(a.remedy))) {
            actions = planDevice({ ...input, remote: await remoteOf(provision, id) }, modules);
          }
          return { id, grade, actions };
        }),
      );

      const outcomes = new Map<string, ActionOutcome[]>();
      let after = new Map<string, DeviceReadiness>();
      if (body.apply) {
        const deps = {
          commands,
          provision,
          registry,
          ring: ctx.services.optional(DEBUG_RING),
          clock: ctx.clock,
          settleMs: c.REMEDIATE_SETTLE_MS,
        };
        const acting = plans.filter((p) => p.actions.length > 0);
        await mapBounded(acting, c.REMEDIATE_CONCURRENCY, async (p) => outcomes.set(p.id, await runDeviceActions(p.id, p.actions, deps, signal)));
        if (acting.length) after = await regradeSettled(acting, outcomes, readiness, c.REMEDIATE_SETTLE_MS, signal);
        ctx.log.info({ devices: acting.length, actions: acting.reduce((n, p) => n + p.actions.length, 0) }, 'remediation applied');
      }

      const devices: DeviceReport[] = plans.map((p) => {
        const regraded = after.get(p.id);
        return {
          device_id: p.id,
          grade_before: p.grade?.grade ?? null,
          reason_before: p.grade ? p.grade.reason : 'the readiness check of this device failed (see the hub log): nothing to plan from',
          actions: p.actions.map((a, i) => {
            const o = outcomes.get(p.id)?.[i];
            return {
              ...a,
              status: o?.status ?? 'planned',
              result: o?.result ?? null,
              error: o?.error ?? null,
              module_after: regraded ? regraded.modules[a.module].grade : null,
            };
          }),
          grade_after: regraded?.grade ?? null,
          reason_after: regraded ? regraded.reason : null,
        };
      });
      const actions = devices.flatMap((d) => d.actions);
      const by_remedy = Object.fromEntries(REMEDIES.map((r) => [r, actions.filter((a) => a.remedy === r).length])) as Record<(typeof REMEDIES)[number], number>;
      return {
        dry_run: !body.apply,
        devices,
        summary: {
          devices: devices.length,
          devices_with_actions: devices.filter((d) => d.actions.length > 0).length,
          actions: actions.length,
          by_remedy,
          failed: actions.filter((a) => a.status === 'failed').length,
          manual: actions.filter((a) => a.how === 'manual').length,
          over_ssh: actions.filter((a) => a.how === 'ssh').length,
        },
        generated_at: new Date(ctx.clock.now()).toISOString(),
      };
    });
  },
});

/** The plugins the device reported last: the newest of its status, health and hello on the bus. */
function pluginsOf(cache: BusCache, deviceId: string): PluginReport[] {
  const snapshot = cache.device(deviceId);
  const reports = (['status', 'health', 'hello'] as const)
    .map((suffix) => snapshot?.latest.get(suffix))
    .filter((e) => e !== undefined && Array.isArray(e.message.plugins))
    .sort((a, b) => b!.receivedAt - a!.receivedAt);
  for (const r of reports) {
    const list = PluginListSchema.safeParse(r!.message.plugins);
    if (list.success) return list.data;
  }
  return [];
}

function layerOf(cache: BusCache, deviceId: string): string | null {
  const layer = cache.device(deviceId)?.latest.get('hello')?.message.layer;
  return typeof layer === 'string' ? layer : null;
}

/** Whether fleet-provision can renew the certificate and re-apply the layer of the device, and why not. */
async function remoteOf(provision: FleetProvision | undefined, deviceId: string): Promise<NonNullable<DevicePlanInput['remote']>> {
  if (!provision) return { certificate: NO_SSH, layer: NO_SSH };
  const [certificate, layer] = await Promise.all([provision.availability(deviceId, 'certificate'), provision.availability(deviceId, 'layer')]);
  return { certificate, layer };
}
