import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { definePlugin, LookoutError, reply, toLookoutError, z } from 'lookout/core';
import { BUILDER_DB, BUILDER_JOBS, JobSchema } from 'lookout/builder-plugins/store';
import { PACKAGES } from 'lookout/builder-plugins/package';
import { TRACK_L } from 'lookout/builder-plugins/track-l';
import { DEPLOYMENTS } from './service.js';
import { DEPLOY_MIGRATIONS, DeployStore } from './deploy-store.js';
import { runOperator } from './operator-cli.js';
import { detectorStatus } from './detector-status.js';
import { rollout } from './rollout.js';
import { perDevice } from './per-device.js';
import { describerLayerEnv } from './describer-layer-env.js';

const config = z.object({
  LOOKOUT_BUILDER_HUB_URL: z.url().optional().describe('the hub the deploy asks get_rfdetr_status through (POST /tools/call)'),
  LOOKOUT_BUILDER_HUB_TOKEN: z.string().optional().describe("the hub's token (never logged)"),
  LOOKOUT_BUILDER_OPERATOR_CLI: z.string().optional().describe('bin/lookout.js of this checkout unless set'),
  LOOKOUT_BUILDER_DEPLOY_ROOT: z
    .string()
    .optional()
    .describe("a simulated fleet's device filesystem root (the operator's --root); {device} stands for the device name, one root per device"),
  LOOKOUT_BUILDER_SERVICE_COMMAND: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe(
      "how a device restarts its runtime so that it loads the package (apply-layer --service-command; the operator's default: systemctl restart lookout-edge); {device} stands for the device name",
    ),
  LOOKOUT_MQTT_URL: z.string().optional().describe("the fleet's broker: apply-layer --restart waits there for the device's hello with the layer"),
  LOOKOUT_MQTT_USERNAME: z.string().optional(),
  LOOKOUT_MQTT_PASSWORD: z.string().optional().describe('broker password (never logged)'),
  LOOKOUT_BUILDER_DEPLOY_VERIFY_MS: z.coerce.number().int().min(100).default(300_000).describe('how long a device has to report the new package'),
  LOOKOUT_BUILDER_DEPLOY_POLL_MS: z.coerce.number().int().min(10).default(2000),
  LOOKOUT_BUILDER_OPERATOR_TIMEOUT_MS: z.coerce.number().int().min(1000).default(1_800_000),
  LOOKOUT_REGISTRY_FILE: z.string().optional(),
  LOOKOUT_SSH_KEY_FILE: z.string().optional(),
  LOOKOUT_SSH_KNOWN_HOSTS: z.string().optional(),
  DEVICE_PASSWORD: z.string().optional().describe('root password of the devices (never logged)'),
});

const Body = z.object({
  package_id: z.string().min(1).max(128).describe('package id or version'),
  devices: z.array(z.string().min(1).max(256)).min(1).max(1000).describe('registry names or targets; the canary first unless `canary` names one'),
  canary: z.string().min(1).max(256).optional(),
  layer: z
    .string()
    .regex(/^[a-z0-9_]{1,64}$/)
    .default('layer2')
    .describe('the layer applied with the package (layer2, the default canary)'),
  restart: z.boolean().default(true).describe('apply-layer --restart: the runtime restarts and loads the package'),
  soak_s: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .default(600)
    .describe('the canary keeps reporting the package this long before the rest'),
  artifact_id: z.string().min(1).max(256).optional().describe('any artifact id: a Track L one is refused'),
});
type DeployBody = z.output<typeof Body>;

/** Stage 5b: deploy a package to the fleet, canary first, through the operator's SSH commands; rollback on failure. */
export default definePlugin({
  name: 'deploy',
  version: '1.0.0',
  core: '^1',
  description:
    'Builder stage 5b: package to a canary (its detector checked, a soak), then the fleet, via push-models and apply-layer over SSH; rollback on failure; every deployment kept',
  config,
  requires: [BUILDER_DB, BUILDER_JOBS, PACKAGES, TRACK_L],
  provides: [DEPLOYMENTS],
  errors: [
    { code: 'track_l_refused', status: 409, description: 'a Track L (host-only language model) artifact is never deployed to a device' },
    { code: 'hub_not_configured', status: 503, description: 'LOOKOUT_BUILDER_HUB_URL is not set: a deploy cannot check the detectors' },
    { code: 'operator_failed', status: 502, description: 'push-models or apply-layer failed on a device' },
    { code: 'status_unavailable', status: 502, description: 'get_rfdetr_status could not be read through the hub' },
    { code: 'not_loaded', status: 502, description: 'the device detector did not report the new package in time' },
    { code: 'soak_failed', status: 502, description: 'the canary stopped reporting the package during the soak' },
  ],
  routes: [
    {
      method: 'POST',
      path: '/api/pipeline/deploy',
      summary: 'Deploy a package: canary, its detector report, soak, then the rest (202; poll the job until DEPLOYED or FAILED)',
      body: Body,
      statuses: [202],
      errors: ['track_l_refused', 'hub_not_configured', 'package.package_unknown', 'config_invalid'],
      response: JobSchema,
    },
    {
      method: 'GET',
      path: '/api/deployments',
      summary: 'Every deployment: what runs where, since when (newest first)',
      query: z.object({ device: z.string().max(256).optional(), package_id: z.string().max(128).optional() }),
      response: z.object({ deployments: z.array(z.looseObject({ device: z.string(), package_version: z.string(), state: z.string(), since: z.string() })) }),
    },
  ],
  start(ctx) {
    const c = ctx.config;
    const { db, migrate } = ctx.services.get(BUILDER_DB);
    migrate('deploy', DEPLOY_MIGRATIONS);
    const store = new DeployStore(db);
    const jobs = ctx.services.get(BUILDER_JOBS);
    const packages = ctx.services.get(PACKAGES);
    const trackL = ctx.services.get(TRACK_L);
    ctx.services.provide(DEPLOYMENTS, store);
    const cli = c.LOOKOUT_BUILDER_OPERATOR_CLI ?? fileURLToPath(new URL('../../../../../bin/lookout.js', import.meta.url));
    const sshEnv = Object.fromEntries(
      (
        [
          'LOOKOUT_REGISTRY_FILE',
          'LOOKOUT_SSH_KEY_FILE',
          'LOOKOUT_SSH_KNOWN_HOSTS',
          'DEVICE_PASSWORD',
          'LOOKOUT_MQTT_URL',
          'LOOKOUT_MQTT_USERNAME',
          'LOOKOUT_MQTT_PASSWORD',
        ] as const
      ).flatMap((k) => (c[k] ? [[k, c[k]]] : [])),
    );
    const running = new Map<string, { abort: AbortController; done: Promise<void> }>();

    // A deploy cut off by a restart may have left devices on either package: it fails, naming where to look.
    for (const job of jobs.interrupted().filter((j) => j.kind === 'deploy')) {
      jobs.transition(job.id, 'FAILED', { reason: 'the builder stopped during the deploy; GET /api/deployments says what runs where; deploy again' });
    }

    ctx.routes.handle<unknown, DeployBody>('POST', '/api/pipeline/deploy', ({ body }) => {
      for (const id of [body.artifact_id, body.package_id].filter((x): x is string => !!x)) {
        if (trackL.isTrackL(id)) {
          throw new LookoutError(
            'deploy.track_l_refused',
            `${id} is a Track L artifact: language models run on the host (their deploy is host environment variables), never on a device`,
            {
              details: { artifact_id: id },
            },
          );
        }
      }
      // A name the per-device settings cannot take is refused before anything is touched.
      for (const d of [...body.devices, ...(body.canary ? [body.canary] : [])]) {
        for (const t of [c.LOOKOUT_BUILDER_DEPLOY_ROOT, c.LOOKOUT_BUILDER_SERVICE_COMMAND]) if (t) perDevice(t, d);
      }
      const pkg = packages.get(body.package_id);
      if (!pkg) throw new LookoutError('package.package_unknown', `no package ${body.package_id}`, { details: { id: body.package_id } });
      const hubUrl = c.LOOKOUT_BUILDER_HUB_URL;
      if (!hubUrl)
        throw new LookoutError('deploy.hub_not_configured', 'set LOOKOUT_BUILDER_HUB_URL: the deploy reads each detector’s get_rfdetr_status through the hub');
      const canary = body.canary ?? body.devices[0];
      const devices = [canary, ...body.devices.filter((d) => d !== canary)];
      const job = jobs.create('deploy', { ...body, devices, canary, package_version: pkg.version });
      jobs.transition(job.id, 'DEPLOYING', { executor: 'ssh' });
      const abort = new AbortController();
      const log = (stream: 'stdout' | 'stderr' | 'event', line: string) => jobs.log(job.id, stream, line);
      const done = (async () => {
        try {
          const result = await rollout(
            { jobId: job.id, pkg, devices, layer: body.layer, restart: body.restart, soakMs: body.soak_s * 1000 },
            {
              store,
              packages,
              operator: (args) => {
                log('event', `lookout ${args.join(' ')}`);
                return runOperator({ cli, env: sshEnv, timeoutMs: c.LOOKOUT_BUILDER_OPERATOR_TIMEOUT_MS }, args, log, abort.signal);
              },
              status: (device) =>
                detectorStatus(
                  { hubUrl, ...(c.LOOKOUT_BUILDER_HUB_TOKEN ? { hubToken: c.LOOKOUT_BUILDER_HUB_TOKEN } : {}), timeoutMs: 30_000 },
                  device,
                  abort.signal,
                ),
              note: (progress, text) => {
                jobs.progress(job.id, progress, text);
                log('event', text);
              },
              deviceArgs: (device) => [...(c.LOOKOUT_BUILDER_DEPLOY_ROOT ? ['--root', perDevice(c.LOOKOUT_BUILDER_DEPLOY_ROOT, device)] : [])],
              layerArgs: (layer) => describerLayerEnv(layer, trackL.promotedDescriber(), join(ctx.runtime.dataDir, 'layer-env')),
              restartArgs: (device) => (c.LOOKOUT_BUILDER_SERVICE_COMMAND ? ['--service-command', perDevice(c.LOOKOUT_BUILDER_SERVICE_COMMAND, device)] : []),
              verifyTimeoutMs: c.LOOKOUT_BUILDER_DEPLOY_VERIFY_MS,
              pollMs: c.LOOKOUT_BUILDER_DEPLOY_POLL_MS,
              signal: abort.signal,
            },
          );
          jobs.transition(job.id, 'DEPLOYED', { result: { package_id: pkg.id, package_version: pkg.version, ...result } });
        } catch (err) {
          if (abort.signal.aborted) return;
          const e = toLookoutError(err);
          jobs.transition(job.id, 'FAILED', { reason: e.message, result: { error: { code: e.code, message: e.message }, ...(e.details ?? {}) } });
        } finally {
          running.delete(job.id);
        }
      })();
      running.set(job.id, { abort, done });
      return reply({ status: 202, body: jobs.get(job.id)! });
    });
    ctx.routes.handle<{ device?: string; package_id?: string }>('GET', '/api/deployments', ({ query }) => ({ deployments: store.list(query) }));

    ctx.onStop(async () => {
      for (const r of running.values()) r.abort.abort();
      await Promise.all([...running.values()].map((r) => r.done));
    });
  },
});
