import { z } from 'zod';
import type { HubInfo } from 'lookout/hub';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { DeviceRegistry } from '../../registry/src/service.js';

const PluginSchema = z.object({
  name: z.string(),
  version: z.string(),
  state: z.string().describe('starting, ok, degraded, failed, skipped or stopped'),
  code: z.string().optional(),
  message: z.string().optional(),
});

const DeviceSchema = z.object({
  device_id: z.string(),
  source: z.string().describe('file, hello or file+hello'),
  online: z.boolean().nullable().describe('its latest status says online and is fresh; null when the hub has heard nothing'),
  image: z.string().nullable(),
  layer: z.string().nullable(),
  roles: z.array(z.string()),
  labels: z.array(z.string()),
  ips: z.array(z.string()),
  ports: z.record(z.string(), z.unknown()).nullable(),
  versions: z.record(z.string(), z.unknown()).nullable().describe('its hello\u2019s versions: runtime, core, node and other packages (plugins listed below)'),
  plugins: z.array(PluginSchema).describe('from its newest status or hello: name, version, state'),
  cert_not_after: z.string().nullable(),
  last_hello_at: z.string().nullable(),
});

export const HostManifestSchema = z.object({
  generated_at: z.string(),
  hub: z.object({
    id: z.string(),
    version: z.string(),
    node: z.string(),
    platform: z.string().describe('os and cpu architecture'),
    started_at: z.string(),
    uptime_s: z.number(),
    http_url: z.string().nullable(),
    tls: z.boolean(),
    token_required: z.boolean(),
  }),
  ports: z.record(z.string(), z.number().int()).describe('the ports the hub listens on: http, broker (embedded)'),
  broker: z.object({ url: z.string().describe('without credentials'), embedded: z.boolean(), connected: z.boolean() }),
  state: z.object({ backend: z.string(), replica: z.boolean(), stale: z.boolean() }),
  plugins: z.array(PluginSchema),
  devices: z.array(DeviceSchema),
});
export type HostManifest = z.infer<typeof HostManifestSchema>;

type Report = z.infer<typeof PluginSchema>;

function plugins(value: unknown): Report[] {
  if (!Array.isArray(value)) return [];
  return (value as unknown[])
    .filter((p): p is Record<string, unknown> => typeof p === 'object' && p !== null && typeof (p as { name?: unknown }).name === 'string')
    .map((p) => ({
      name: String(p.name),
      version: typeof p.version === 'string' ? p.version : 'unknown',
      state: typeof p.state === 'string' ? p.state : 'unknown',
      ...(typeof p.code === 'string' ? { code: p.code } : {}),
      ...(typeof p.message === 'string' ? { message: p.message } : {}),
    }));
}

function portOf(url: string | undefined): number | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.port ? Number(u.port) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What an operator pastes into a bug report: the hub (version, plugins with state, ports, broker,
 * state back-end) and each device as the registry and its own announcements (hello, status) show it.
 * Holds no secret: the broker URL is the credential-free one, and settings are not listed.
 */
export function hostManifest(info: HubInfo, registry: DeviceRegistry, cache: BusCache | undefined, now = Date.now()): HostManifest {
  const shared = info.sharedState?.() ?? { backend: 'memory', replica: false, stale: false };
  const ports: Record<string, number> = {};
  const http = portOf(info.httpUrl);
  if (http !== undefined) ports.http = http;
  const broker = portOf(info.brokerUrl);
  if (broker !== undefined && info.embeddedBroker) ports.broker = broker;
  const devices = registry
    .list()
    .map((d) => {
      const latest = cache?.device(d.deviceId)?.latest;
      const hello = latest?.get('hello')?.message;
      const status = latest?.get('status')?.message;
      const versions = hello?.versions;
      const reported = plugins(status?.plugins).length > 0 ? plugins(status?.plugins) : plugins(hello?.plugins);
      return {
        device_id: d.deviceId,
        source: d.source,
        online: latest ? (cache?.isOnline(d.deviceId, now) ?? null) : null,
        image: d.image ?? (typeof hello?.image === 'string' ? hello.image : null),
        layer: d.layer ?? (typeof hello?.layer === 'string' ? hello.layer : null),
        roles: d.roles,
        labels: d.labels,
        ips: d.ips,
        ports: d.ports ? { ...d.ports } : null,
        versions: versions && typeof versions === 'object' ? { ...(versions as Record<string, unknown>) } : null,
        plugins: reported,
        cert_not_after: d.certNotAfter ?? null,
        last_hello_at: d.lastHelloAt === null ? null : new Date(d.lastHelloAt).toISOString(),
      };
    })
    .sort((a, b) => (a.device_id < b.device_id ? -1 : 1));
  return {
    generated_at: new Date(now).toISOString(),
    hub: {
      id: info.id,
      version: info.version,
      node: process.versions.node,
      platform: `${process.platform}-${process.arch}`,
      started_at: new Date(info.startedAt).toISOString(),
      uptime_s: Math.round((now - info.startedAt) / 1000),
      http_url: info.httpUrl ?? null,
      tls: info.tlsCertPath !== undefined,
      token_required: info.tokenRequired,
    },
    ports,
    broker: { url: info.brokerUrl, embedded: info.embeddedBroker, connected: info.bus.connected },
    state: { backend: shared.backend, replica: shared.replica, stale: shared.stale },
    plugins: plugins(info.plugins?.() ?? []),
    devices,
  };
}
