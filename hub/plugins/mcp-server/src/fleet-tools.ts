import { z } from 'zod';
import { LookoutError, type HttpMethod } from 'lookout/core';
import { DeviceIdSchema, LIVE_JPEG_LIMITS } from 'lookout/core/contracts';
import type { HubRouteCatalog } from 'lookout/hub';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { DeviceRegistry } from '../../registry/src/service.js';
import { callRoute } from './route-call.js';
import { callSources, liveSources, type Sources } from './sources.js';

/** A fleet tool's answer: its JSON, pictures for image blocks, and where its numbers come from. */
export interface FleetAnswer {
  structured: Record<string, unknown>;
  images?: { data: string; mimeType: string }[];
  sources: Sources;
}

export interface FleetToolDeps {
  routes: HubRouteCatalog;
  cache: BusCache;
  registry: DeviceRegistry;
}

/**
 * A tool of the hub itself (not of one device). Names carry no dot: `<device>.<tool>` is a device's.
 * Every one is read-only; the fleet history's questions (issue 29 item 1) join this table as route
 * tools of GET /fleet/history with `kind: 'history'` sources.
 */
export interface FleetTool {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  run(args: Record<string, unknown>, deps: FleetToolDeps, signal: AbortSignal): Promise<FleetAnswer>;
}

const Target = z.string().min(1).max(256).describe('device id, device address (ip or ip:port) or label such as "canary"');
const L = LIVE_JPEG_LIMITS;

/** A tool answering with a declared GET route's JSON, the arguments as its query. */
function routeTool(name: string, title: string, path: string, description: string, input: z.ZodObject): FleetTool {
  return {
    name,
    title,
    description: `${description} (the answer of GET ${path}, with \`sources\`)`,
    input,
    async run(args, deps, signal) {
      const answer = await callRoute(deps.routes, 'GET' satisfies HttpMethod, path, asQuery(args), signal);
      if (answer.kind !== 'json' || !isObject(answer.body)) throw new LookoutError('internal', `GET ${path} did not answer JSON`);
      const sources = liveSources(deps.cache, devicesIn(answer.body, deps));
      return { structured: { ...answer.body, sources }, sources };
    },
  };
}

/**
 * A question to the fleet history (GET /fleet/history/*): the route answers its own `sources`
 * (the devices whose counts these are, and the span), which the tool passes on as they are.
 */
function historyTool(name: string, title: string, path: string, description: string, input: z.ZodObject): FleetTool {
  return {
    name,
    title,
    description: `${description} (the answer of GET ${path}; \`sources\` names the devices and span)`,
    input,
    async run(args, deps, signal) {
      const answer = await callRoute(deps.routes, 'GET', path, asQuery(args), signal);
      if (answer.kind !== 'json' || !isObject(answer.body) || !isObject(answer.body.sources))
        throw new LookoutError('internal', `GET ${path} did not answer JSON with sources`);
      return { structured: answer.body, sources: answer.body.sources as unknown as Sources };
    },
  };
}

const From = z.string().min(1).max(40).optional().describe('start: ISO 8601 date-time or epoch ms (default: an hour before `to`)');
const To = z.string().min(1).max(40).optional().describe('end, exclusive: ISO 8601 date-time or epoch ms (default: now)');
const HistoryTarget = z.string().min(1).max(256).describe('device id or role label (every device carrying it)');

/** The fleet history's questions (issue 29 item 1), answered from the devices' own stored counts. */
export const HISTORY_TOOLS: readonly FleetTool[] = [
  historyTool(
    'history_people_seen',
    'People seen',
    '/fleet/history/people',
    'People seen at a device or label between two instants: the most at once (the devices’ person_count), the mean, and distinct person tracks',
    z.object({ target: HistoryTarget, from: From, to: To }),
  ),
  historyTool(
    'history_last_seen',
    'Last time a class was seen',
    '/fleet/history/last-seen',
    'The last time a class (person, car, knife… or a production class id) was seen, by which device',
    z.object({ class: z.string().min(1).max(64).describe('class name or production class id'), target: HistoryTarget.optional() }),
  ),
  historyTool(
    'history_incidents',
    'Incidents',
    '/fleet/history/events',
    'Incidents and other events a device or label published between two instants, newest first',
    z.object({ target: HistoryTarget, from: From, to: To, kind: z.literal('event').default('event'), limit: z.number().int().min(1).max(1000).optional() }),
  ),
  historyTool(
    'history_ocr_reads',
    'OCR reads',
    '/fleet/history/events',
    'OCR reads (plates, signs) per track a device or label published between two instants, newest first',
    z.object({ target: HistoryTarget, from: From, to: To, kind: z.literal('ocr').default('ocr'), limit: z.number().int().min(1).max(1000).optional() }),
  ),
];

export const FLEET_TOOLS: readonly FleetTool[] = [
  {
    name: 'fleet_devices',
    title: 'Fleet devices',
    description: 'The registered devices with their labels, roles and live state (online, stale, thermal, detection, person count), with `sources`',
    input: z.object({ label: z.string().min(1).max(128).optional().describe('only devices carrying this role label') }),
    run(args, deps) {
      const label = typeof args.label === 'string' ? args.label : undefined;
      const devices = deps.registry.list().filter((d) => label === undefined || d.labels.includes(label));
      const rows = devices.map((d) => {
        const view = deps.cache.view(d.deviceId);
        return {
          device_id: d.deviceId,
          labels: d.labels,
          roles: d.roles,
          image: d.image ?? null,
          layer: d.layer ?? null,
          tools: d.toolUrl !== null,
          online: view?.online ?? false,
          stale: view?.stale ?? true,
          last_message_at: view?.last_message_at ?? null,
          thermal_state: (view?.status?.thermal_state as string | undefined) ?? null,
          detection: view?.detection ?? null,
          person_count: view?.person_count ?? null,
          storage_health: (view?.health?.storage_health as string | undefined) ?? null,
        };
      });
      const sources = liveSources(
        deps.cache,
        rows.map((r) => r.device_id),
      );
      return Promise.resolve({ structured: { devices: rows, count: rows.length, sources }, sources });
    },
  },
  routeTool(
    'fleet_latest',
    'Latest per device',
    '/fleet/mqtt/latest',
    'The newest status, detections, health and chunks each device published',
    z.object({
      device: DeviceIdSchema.optional().describe('only this device'),
      stale: z.boolean().optional().describe('only stale (true) or fresh (false) devices'),
    }),
  ),
  routeTool(
    'fleet_health',
    'Fleet health',
    '/fleet/health',
    'Recorder, storage and readiness health per device and for the fleet',
    z.object({ device: DeviceIdSchema.optional().describe('only this device') }),
  ),
  routeTool(
    'fleet_readiness',
    'Fleet readiness',
    '/fleet/readiness',
    'The readiness grade of the fleet and of each device, module by module, with the evidence',
    z.object({ device: DeviceIdSchema.optional().describe('only this device') }),
  ),
  routeTool(
    'playback_ready_clips',
    'Playback-ready clips',
    '/fleet/playback-ready',
    'The newest recorded chunks of the devices of a role label, with their metadata and URLs to play them',
    z.object({
      shadow: z.string().min(1).max(128).optional().describe('role label (or device id): only its devices; all registered devices without it'),
      limit: z.number().int().min(1).max(200).optional().describe('most chunks in the answer (newest first; default 20)'),
      justified: z.boolean().optional().describe('only justified (true) or only unjustified (false) chunks'),
    }),
  ),
  {
    name: 'snapshot',
    title: 'Snapshot',
    description:
      'A JPEG of a device as an image content block: its get_live_jpeg tool, else the hub’s live tail, else the newest chunk over SSH (the answer of GET /stream/snapshot)',
    input: z.object({
      target: Target,
      w: z.number().int().min(L.minWidth).max(L.maxWidth).optional().describe(`width in pixels (${L.minWidth}-${L.maxWidth})`),
      q: z.number().int().min(L.minQuality).max(L.maxQuality).optional().describe(`JPEG quality (${L.minQuality}-${L.maxQuality})`),
    }),
    async run(args, deps, signal) {
      const started = Date.now();
      const answer = await callRoute(deps.routes, 'GET', '/stream/snapshot', asQuery(args), signal);
      const body = answer.kind === 'reply' ? answer.reply.body : undefined;
      if (!Buffer.isBuffer(body) && !(body instanceof Uint8Array)) throw new LookoutError('internal', 'GET /stream/snapshot did not answer a picture');
      const headers = answer.kind === 'reply' ? (answer.reply.headers ?? {}) : {};
      const deviceId = headers['X-Lookout-Device-Id'] ?? String(args.target);
      const bytes = Buffer.from(body);
      const capturedAt = headers['X-Lookout-Captured-At'] ?? null;
      // The picture's own time when the step knows it (a tail's frame, a chunk), else the call's span.
      const sources: Sources = capturedAt
        ? { devices: [deviceId], from: capturedAt, to: capturedAt, kind: 'call' }
        : callSources(deviceId, started, Date.now());
      return {
        structured: { device_id: deviceId, source: headers['X-Lookout-Snapshot-Source'] ?? null, content_type: 'image/jpeg', bytes: bytes.length, sources },
        images: [{ data: bytes.toString('base64'), mimeType: 'image/jpeg' }],
        sources,
      };
    },
  },
  ...HISTORY_TOOLS,
];

/** MCP arguments (JSON) as the route's query strings: the route's own schema then checks them. */
function asQuery(args: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(args)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
  }
  return out;
}

/** The devices a route's answer speaks of: its `devices` (record or list) and its chunks' devices. */
function devicesIn(body: Record<string, unknown>, deps: FleetToolDeps): string[] {
  const ids = new Set<string>();
  const devices = body.devices;
  if (Array.isArray(devices)) for (const d of devices) addId(ids, d);
  else if (isObject(devices)) for (const id of Object.keys(devices)) ids.add(id);
  for (const key of ['recent_chunks', 'errors']) {
    const list = body[key];
    if (Array.isArray(list)) for (const c of list) addId(ids, c);
  }
  if (ids.size === 0 && devices === undefined) for (const d of deps.registry.list()) ids.add(d.deviceId);
  return [...ids];
}

function addId(ids: Set<string>, row: unknown): void {
  if (isObject(row) && typeof row.device_id === 'string') ids.add(row.device_id);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
