import { z } from 'zod';
import { DeviceIdSchema } from 'lookout/core/contracts';
import { LookoutError, definePlugin, reply } from 'lookout/core';
import { HUB_INFO } from 'lookout/hub';
import { deviceFolderOf, namesOneFolder } from 'lookout/lib/storage';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_SSH, DEVICE_SSH_ERRORS } from '../../device-ssh/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { tarGz, type ExportEntry } from './debug-export.js';
import { deviceLogFollow, deviceLogTail, type DeviceLogQuery } from './device-logs.js';
import { HostManifestSchema, hostManifest } from './host-manifest.js';
import { hubLogTail } from './hub-log-tail.js';
import { DeviceLogsQuery, DeviceLogsResponse, ExportQuery, LogTailQuery, LogTailResponse } from './schemas.js';
import { SecretScrubber, isSecretName } from './secret-scrub.js';

const MiB = 1024 * 1024;

function noFolderFor(deviceId: string): LookoutError {
  return new LookoutError('argument_invalid', `device: "${deviceId}" names no folder`, { details: { field: 'device' } });
}

/**
 * What an operator needs for a bug report and a live look: the host manifest, the hub's own log
 * tail, a device's log tail over SSH (follow as SSE) and one archive of all of it, secrets taken out.
 */
export default definePlugin({
  name: 'ops-debug',
  version: '1.0.0',
  core: '^1',
  description:
    'Host manifest (GET /fleet/host-manifest), hub and device log tails (GET /debug/log/tail, /debug/shadow/:device/logs) and the debug export (GET /debug/export)',
  requires: [HUB_INFO, DEVICE_REGISTRY],
  optionalRequires: [BUS_CACHE, DEBUG_RING, DEVICE_SSH],
  config: z.object({
    LOOKOUT_DEVICE_LOGS_DIR: z
      .string()
      .startsWith('/')
      .default('/data/logs')
      .describe('the folder of log files on a device (its overlay); {device} stands for the device id (devices that share one host, as the demo fleet)'),
    LOOKOUT_DEBUG_FOLLOW_MAX_S: z.coerce.number().int().min(1).max(86_400).default(600).describe('longest follow of a device log'),
    LOOKOUT_DEBUG_EXPORT_MAX_DEVICES: z.coerce.number().int().min(1).max(256).default(16).describe('devices one export may add logs of'),
    LOOKOUT_DEBUG_EXPORT_RING_EVENTS: z.coerce.number().int().min(1).max(100_000).default(2000).describe('newest debug ring events in an export'),
    // Read only to take their values out of everything these routes answer; never shown.
    LOOKOUT_FLEET_SECRET: z.string().optional().describe('read to redact it (and what derives from it) from answers; never shown'),
    DEVICE_PASSWORD: z.string().optional().describe('read to redact it from answers; never shown'),
    LOOKOUT_HUB_TOKEN: z.string().optional().describe('read to redact it from answers; never shown'),
    LOOKOUT_MQTT_PASSWORD: z.string().optional().describe('read to redact it from answers; never shown'),
    LOOKOUT_SSH_KEY_PASSPHRASE: z.string().optional().describe('read to redact it from answers; never shown'),
  }),
  errors: [{ code: 'log_unavailable', status: 503, description: 'the hub keeps no log lines (its logger was given without a ring)' }],
  routes: [
    {
      method: 'GET',
      path: '/fleet/host-manifest',
      summary: 'The hub and its devices for a bug report: versions, plugins with state, ports, broker, state back-end, device images, layers and versions',
      response: HostManifestSchema,
    },
    {
      method: 'GET',
      path: '/debug/log/tail',
      summary: 'The hub\u2019s own recent log lines (a bounded ring), by level and component',
      query: LogTailQuery,
      response: LogTailResponse,
      errors: ['log_unavailable'],
    },
    {
      method: 'GET',
      path: '/debug/shadow/:device/logs',
      summary: 'A device log tail over SSH from its overlay (bounded); follow=true streams new lines as Server-Sent Events until the client leaves',
      params: { device: 'the device id' },
      query: DeviceLogsQuery,
      response: DeviceLogsResponse,
      errors: ['target_unknown', 'argument_invalid', ...DEVICE_SSH_ERRORS],
    },
    {
      method: 'GET',
      path: '/debug/export',
      summary:
        'A tar.gz of the debug ring, the hub\u2019s config (redacted), the host manifest, the hub\u2019s recent log and chosen devices\u2019 logs; secrets redacted',
      query: ExportQuery,
      produces: 'application/gzip',
      errors: ['target_unknown', 'argument_invalid'],
    },
  ],
  start(ctx) {
    const cfg = ctx.config;
    const info = ctx.services.get(HUB_INFO);
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const cache = ctx.services.optional(BUS_CACHE);
    const ring = ctx.services.optional(DEBUG_RING);
    const scrub = new SecretScrubber({
      fleetSecret: cfg.LOOKOUT_FLEET_SECRET,
      // The plugin's own settings (given in the hub's options or its environment), and every secret-named
      // variable of the process (an API key of another plugin's describer, an approval token).
      settings: () => [
        cfg.DEVICE_PASSWORD,
        cfg.LOOKOUT_HUB_TOKEN,
        cfg.LOOKOUT_MQTT_PASSWORD,
        cfg.LOOKOUT_SSH_KEY_PASSPHRASE,
        ...Object.entries(process.env)
          .filter(([k]) => isSecretName(k))
          .map(([, v]) => v),
      ],
      deviceIds: () => registry.list().map((d) => d.deviceId),
    });
    const ssh = () => {
      const s = ctx.services.optional(DEVICE_SSH);
      if (!s) throw new LookoutError('ssh_not_configured', 'the device-ssh plugin is not running: device logs cannot be read');
      return s;
    };
    const known = (deviceId: string) => {
      if (!registry.get(deviceId)) throw new LookoutError('target_unknown', `no registered device is "${deviceId}"`, { details: { target: deviceId } });
      // Its logs folder and the export's entries are named after it.
      if (!namesOneFolder(deviceId)) throw noFolderFor(deviceId);
    };
    const logQuery = (q: z.output<typeof DeviceLogsQuery>): DeviceLogQuery => ({
      file: q.file,
      lines: q.lines,
      max_bytes: q.max_bytes,
      follow: q.follow === 'true',
      follow_s: Math.min(q.follow_s, cfg.LOOKOUT_DEBUG_FOLLOW_MAX_S),
    });
    const manifest = () => scrub.refresh().value(hostManifest(info, registry, cache));

    ctx.routes.handle('GET', '/fleet/host-manifest', () => manifest());

    ctx.routes.handle<z.output<typeof LogTailQuery>>('GET', '/debug/log/tail', ({ query }) => {
      if (!info.logs)
        throw new LookoutError('ops-debug.log_unavailable', 'the hub keeps no log lines: it was started with a logger of its embedder and no ring');
      return hubLogTail(info.logs, query, scrub.refresh());
    });

    const logsDirOf = (deviceId: string) => {
      const dir = deviceFolderOf(cfg.LOOKOUT_DEVICE_LOGS_DIR, deviceId);
      if (dir === undefined) throw noFolderFor(deviceId);
      return dir;
    };

    ctx.routes.handle<z.output<typeof DeviceLogsQuery>>('GET', '/debug/shadow/:device/logs', async ({ params, query, signal }) => {
      const deviceId = DeviceIdSchema.parse(params.device);
      known(deviceId);
      const q = logQuery(query);
      return q.follow
        ? deviceLogFollow(ssh(), deviceId, logsDirOf(deviceId), q, scrub, signal)
        : deviceLogTail(ssh(), deviceId, logsDirOf(deviceId), q, scrub, signal);
    });

    ctx.routes.handle<z.output<typeof ExportQuery>>('GET', '/debug/export', async ({ query, signal }) => {
      const devices = [...new Set(query.device ?? [])];
      if (devices.length > cfg.LOOKOUT_DEBUG_EXPORT_MAX_DEVICES) {
        throw new LookoutError('argument_invalid', `device: at most ${cfg.LOOKOUT_DEBUG_EXPORT_MAX_DEVICES} devices per export`, {
          details: { field: 'device' },
        });
      }
      devices.forEach(known);
      scrub.refresh();
      const entries: ExportEntry[] = [];
      const json = (name: string, value: unknown) => entries.push({ name, text: `${JSON.stringify(scrub.value(value), null, 2)}\n` });
      json('host-manifest.json', manifest());
      json('hub-config.json', {
        hub: {
          id: info.id,
          version: info.version,
          broker_url: info.brokerUrl,
          embedded_broker: info.embeddedBroker,
          token_required: info.tokenRequired,
          http_url: info.httpUrl ?? null,
        },
        plugins: info.plugins?.() ?? [],
        // The environment the hub process runs with: Lookout's settings, secret-named ones redacted.
        environment: scrub.env(Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(LOOKOUT_|DEVICE_|MESH_|A2A_|COMPILE_)/.test(k)))),
      });
      json(
        'debug-ring.json',
        ring ? ring.query({ limit: cfg.LOOKOUT_DEBUG_EXPORT_RING_EVENTS }) : { events: [], note: 'the debug-ring plugin is not running' },
      );
      if (info.logs) {
        const tail = hubLogTail(info.logs, { lines: query.lines, max_bytes: 4 * MiB }, scrub);
        entries.push({ name: 'hub.log', text: tail.lines.map((l) => JSON.stringify(l.record)).join('\n') + '\n' });
      }
      for (const id of devices) {
        try {
          const tail = await deviceLogTail(
            ssh(),
            id,
            logsDirOf(id),
            { file: 'lookout-edge.log', lines: query.lines, max_bytes: 4 * MiB, follow: false, follow_s: 0 },
            scrub,
            signal,
          );
          entries.push({ name: `devices/${id}/lookout-edge.log`, text: tail.lines.join('\n') + '\n' });
        } catch (err) {
          // One unreachable device does not spoil the archive: it says why instead.
          const e = err instanceof LookoutError ? err : new LookoutError('ssh_failed', String(err));
          json(`devices/${id}/error.json`, { error: { code: e.code, message: e.message } });
        }
      }
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const folder = `lookout-debug-${stamp}`;
      const body = await tarGz(folder, entries);
      return reply({ status: 200, body, type: 'application/gzip', headers: { 'Content-Disposition': `attachment; filename="${folder}.tar.gz"` } });
    });
  },
});
