import { PluginReportSchema, RecordingStatusResultSchema } from 'lookout/core/contracts';
import { isObject, toLookoutError } from 'lookout/core';
import type { HubRouteCatalog } from 'lookout/hub';
import { z } from 'zod';
import { LiveStatusResultSchema } from '../../../../plugins/rtsp/src/service.js';
import type { PeerQueries } from '../../a2a/src/service.js';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { DeviceTools } from '../../tools-proxy/src/service.js';
import { pluginOf, type DeviceFacts, type HealthAnswer, type Probe } from './device-facts.js';
import { tcpConnect } from './tcp-connect.js';

/** The hub services one check reads; `peers` and `routes` are absent when their providers are. */
export interface FactSources {
  cache: BusCache;
  tools: DeviceTools;
  peers?: PeerQueries;
  routes?: HubRouteCatalog;
  /** Bound on the TCP connection to a device's ONVIF port. */
  connectTimeoutMs: number;
}

const PluginListSchema = z.array(PluginReportSchema);
/** Loose: a device newer than this hub may report more; what the graders read is checked. */
const LiveStatusSchema = LiveStatusResultSchema.loose();

/**
 * Gathers one device's facts: its enriched get_system_health first (it says which plugins run),
 * then, at once, what the plugins it reports serve (get_recording_status, get_live_status, the
 * ONVIF port) and the hub's peer_hello to its sidecar. Every probe ends in a value or a reason;
 * this never rejects. `signal` bounds the whole check.
 */
export async function collectFacts(
  src: FactSources,
  deviceId: string,
  device: RegisteredDevice | undefined,
  at: number,
  signal: AbortSignal,
): Promise<DeviceFacts> {
  const view = src.cache.view(deviceId, at);
  const presence: DeviceFacts['presence'] = !view
    ? 'unknown'
    : view.status?.state === 'offline'
      ? 'offline'
      : view.stale
        ? 'stale'
        : view.online
          ? 'online'
          : 'unknown';
  const host = hostOf(device?.toolUrl ?? null);
  const registered: DeviceFacts['registered'] = device
    ? {
        toolUrl: device.toolUrl,
        unreachableReason: device.unreachableReason ?? null,
        host,
        ports: device.ports,
        layer: device.layer ?? null,
        image: device.image ?? null,
        certNotAfter: device.certNotAfter ?? null,
      }
    : null;

  const health = await healthOf(src, deviceId, device, signal);
  const plugins = pluginsOf(src, deviceId, health);
  const partial = { plugins } as Pick<DeviceFacts, 'plugins'> as DeviceFacts;
  const has = (name: string) => health.ok && pluginOf(partial, name) !== undefined;
  const call = (tool: string) => (device && has(toolOwner[tool]) ? toolProbe(src, device, tool, signal) : Promise.resolve(null));
  const onvifPort = device?.ports?.onvif;

  const [peerHello, recording, live, onvifConnect] = await Promise.all([
    peerHelloOf(src, deviceId, device, signal),
    call('get_recording_status'),
    call('get_live_status'),
    has('onvif') && host !== null && typeof onvifPort === 'number' ? tcpConnect(host, onvifPort, src.connectTimeoutMs, signal) : Promise.resolve(null),
  ]);

  return {
    deviceId,
    at,
    registered,
    presence,
    health,
    plugins,
    layer: device?.layer ?? layerFromHello(src, deviceId),
    peerHello,
    recording: checked(recording, RecordingStatusResultSchema, 'get_recording_status'),
    liveStatus: checked(live, LiveStatusSchema, 'get_live_status'),
    onvifConnect,
    manifest: {
      chunks: view?.recent_chunks.length ?? 0,
      newest: view?.recent_chunks[0] ? { name: view.recent_chunks[0].name ?? null, started_at: view.recent_chunks[0].started_at ?? null } : null,
    },
    dets: detsOf(src, deviceId),
    hubRoutes: src.routes ? routesOf(src.routes) : null,
  };
}

/** Which plugin serves each tool the check calls (it is only called when the device reports that plugin). */
const toolOwner: Record<string, string> = { get_recording_status: 'recorder', get_live_status: 'rtsp' };

async function healthOf(src: FactSources, deviceId: string, device: RegisteredDevice | undefined, signal: AbortSignal): Promise<Probe<HealthAnswer>> {
  if (!device) return { ok: false, code: 'target_unknown', reason: `${deviceId} is on the bus but not in the registry: the hub does not contact it` };
  if (!device.toolUrl) return { ok: false, code: 'target_not_allowed', reason: device.unreachableReason ?? 'the registry gives it no tool URL' };
  try {
    const outcome = await src.tools.enrichedHealth(device, signal);
    if (outcome.status === 'error') return { ok: false, code: outcome.code ?? 'tool_failed', reason: outcome.error };
    if (!isObject(outcome.result)) return { ok: false, code: 'tool_failed', reason: 'get_system_health answered no object' };
    return { ok: true, value: outcome.result };
  } catch (err) {
    return failure(err, signal);
  }
}

async function toolProbe(src: FactSources, device: RegisteredDevice, tool: string, signal: AbortSignal): Promise<Probe<unknown>> {
  try {
    const outcome = await src.tools.call(device, tool, {}, signal);
    return outcome.status === 'ok' ? { ok: true, value: outcome.result } : { ok: false, code: outcome.code ?? 'tool_failed', reason: outcome.error };
  } catch (err) {
    return failure(err, signal);
  }
}

async function peerHelloOf(src: FactSources, deviceId: string, device: RegisteredDevice | undefined, signal: AbortSignal): Promise<DeviceFacts['peerHello']> {
  if (!src.peers) return { absent: 'the hub runs no a2a plugin: it cannot make peer queries to device sidecars (A2A_PEERS)' };
  const problem = src.peers.problem();
  if (problem !== null) return { ok: false, code: 'a2a_unavailable', reason: problem };
  if (!device) return { ok: false, code: 'target_unknown', reason: `${deviceId} is not in the registry: the hub does not contact it` };
  try {
    const ack = await src.peers.peerHello(device, signal);
    return { ok: true, value: { ...ack } };
  } catch (err) {
    return failure(err, signal);
  }
}

/** A rejection as a probe's failure; when the check's own bound stopped it, that bound says why. */
function failure(err: unknown, signal: AbortSignal): { ok: false; code: string; reason: string } {
  if (signal.aborted) {
    const why = toLookoutError(signal.reason);
    return { ok: false, code: why.code, reason: why.message };
  }
  const e = toLookoutError(err);
  return { ok: false, code: e.code, reason: e.message };
}

/** A tool's answer checked against the tool's contract: an answer outside it is a failure with the first issue. */
function checked(probe: Probe<unknown> | null, schema: z.ZodType, tool: string): Probe<Record<string, unknown>> | null {
  if (probe === null || !probe.ok) return probe;
  const parsed = schema.safeParse(probe.value);
  if (parsed.success && isObject(parsed.data)) return { ok: true, value: parsed.data };
  const issue = parsed.success ? undefined : parsed.error.issues[0];
  return {
    ok: false,
    code: 'result_invalid',
    reason: `${tool} answered outside its contract: ${issue?.path.join('.') || 'result'}: ${issue?.message ?? 'not an object'}`,
  };
}

/** The plugins from the health answer; else the newest report among status, health and hello on the bus. */
function pluginsOf(src: FactSources, deviceId: string, health: Probe<HealthAnswer>): DeviceFacts['plugins'] {
  if (health.ok) {
    const list = PluginListSchema.safeParse(health.value.plugins);
    if (list.success) return { list: list.data, source: 'get_system_health' };
  }
  const snapshot = src.cache.device(deviceId);
  const reports = (['status', 'health', 'hello'] as const)
    .map((suffix) => ({ suffix, entry: snapshot?.latest.get(suffix) }))
    .filter((r) => r.entry !== undefined && Array.isArray(r.entry.message.plugins))
    .sort((a, b) => b.entry!.receivedAt - a.entry!.receivedAt);
  for (const r of reports) {
    const list = PluginListSchema.safeParse(r.entry!.message.plugins);
    if (list.success) return { list: list.data, source: `its last ${r.suffix} message on the bus` };
  }
  return null;
}

function layerFromHello(src: FactSources, deviceId: string): string | null {
  const layer = src.cache.device(deviceId)?.latest.get('hello')?.message.layer;
  return typeof layer === 'string' ? layer : null;
}

function detsOf(src: FactSources, deviceId: string): DeviceFacts['dets'] {
  const latest = src.cache.device(deviceId)?.latest.get('dets');
  if (!latest) return null;
  const dets = Array.isArray(latest.message.dets) ? (latest.message.dets as unknown[]) : [];
  const spatial = dets.filter((d) => isObject(d) && typeof d.x === 'number' && typeof d.y === 'number' && typeof d.z === 'number').length;
  return { at: new Date(latest.receivedAt).toISOString(), detections: dets.length, spatial };
}

function routesOf(routes: HubRouteCatalog): { playback: boolean; snapshot: boolean } {
  const served = new Set(routes.list().map((r) => `${r.decl.method} ${r.decl.path}`));
  return { playback: served.has('GET /fleet/playback-ready'), snapshot: served.has('GET /stream/snapshot') };
}

function hostOf(toolUrl: string | null): string | null {
  if (!toolUrl) return null;
  try {
    return new URL(toolUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
}
