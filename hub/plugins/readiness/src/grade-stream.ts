import { grader, pluginGate, pluginNotOk, pluginValue } from './grade-kit.js';
import type { DeviceFacts } from './device-facts.js';
import type { ModuleResult } from './readiness-schemas.js';

/**
 * snapshot: a JPEG of the device through the hub's GET /stream/snapshot, whose steps are the
 * encode plugin's get_live_jpeg, the hub's tail of the device's live H.265 stream, then SSH. Graded
 * from the encode plugin's state, the live port its hello announces and the hub's route (no JPEG is
 * taken: a check every few minutes must not load the device).
 *  - not_applicable: the device reports no encode plugin
 *  - ready: encode ok, a live port announced, the hub serves /stream/snapshot
 *  - degraded: encode starting or degraded, or no live port (only the tool and SSH steps remain)
 *  - not_ready: encode failed or skipped; the hub serves no snapshots; no answer
 */
export function gradeSnapshot(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'encode plugin state, the live port of its hello, and the hub route GET /stream/snapshot');
  const gate = pluginGate(facts, g, 'encode');
  if (!gate.applies) return gate.result;
  const livePort = facts.registered?.ports?.live ?? null;
  const value = { plugin: pluginValue(gate.plugin), live_port: livePort, hub_serves_snapshot: facts.hubRoutes?.snapshot ?? null };
  if (facts.hubRoutes && !facts.hubRoutes.snapshot) return g.notReady(value, 'this hub serves no GET /stream/snapshot (its snapshots plugin is not loaded)');
  const notOk = pluginNotOk(gate.plugin);
  if (notOk) return g.degraded(value, notOk);
  if (livePort === null)
    return g.degraded(value, "the device's hello announces no live port: the hub's live-tail step cannot serve it (the device tool and SSH remain)");
  return g.ready(value);
}

/**
 * onvif: the device's ONVIF service, from the onvif plugin's state and a TCP connection from the
 * hub to the port its hello announces (at the registry's address for it).
 *  - not_applicable: the device reports no onvif plugin
 *  - ready: the plugin ok and its port accepts a connection
 *  - degraded: the plugin starting or degraded, or no onvif port announced (clients cannot find it)
 *  - not_ready: nothing accepts connections at its port; the plugin failed or was skipped; no answer
 */
export function gradeOnvif(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'onvif plugin state and a TCP connection to the onvif port of its hello');
  const gate = pluginGate(facts, g, 'onvif');
  if (!gate.applies) return gate.result;
  const port = facts.registered?.ports?.onvif ?? null;
  const probe = facts.onvifConnect;
  const value = { plugin: pluginValue(gate.plugin), port, connect: probe ? (probe.ok ? probe.value : { code: probe.code, reason: probe.reason }) : null };
  if (probe && !probe.ok) return g.notReady(value, `its ONVIF port does not accept connections: ${probe.reason}`);
  const notOk = pluginNotOk(gate.plugin);
  if (notOk) return g.degraded(value, notOk);
  if (port === null) return g.degraded(value, "the device's hello announces no onvif port: clients cannot find the service");
  if (!probe) return g.degraded(value, 'the hub has no address to reach its ONVIF port at');
  return g.ready(value);
}

/**
 * rtsp: the RTSP preview, from the rtsp plugin's get_live_status.
 *  - not_applicable: the device reports no rtsp plugin
 *  - ready: stream_up (the encoder runs and has made a keyframe: a viewer gets pictures at once)
 *  - degraded: the server answers but the stream is not up, or the plugin is starting or degraded
 *  - not_ready: get_live_status failed; the plugin failed or was skipped; no answer
 */
export function gradeRtsp(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'get_live_status (stream_up, keyframe, size, viewers) of the rtsp plugin');
  const gate = pluginGate(facts, g, 'rtsp');
  if (!gate.applies) return gate.result;
  const live = facts.liveStatus;
  if (!live) return g.notReady({ plugin: pluginValue(gate.plugin) }, 'get_live_status was not asked');
  if (!live.ok) return g.notReady({ plugin: pluginValue(gate.plugin), code: live.code }, `get_live_status failed: ${live.code}: ${live.reason}`);
  const s = live.value;
  const encoder = s.encoder as { running?: unknown } | undefined;
  const value = {
    stream_up: s.stream_up ?? null,
    width: s.width ?? null,
    height: s.height ?? null,
    fps: s.fps ?? null,
    viewers: s.viewers ?? null,
    last_keyframe_at: s.last_keyframe_at ?? null,
    rtsp_port: (s.rtsp as { port?: unknown } | undefined)?.port ?? null,
    plugin: pluginValue(gate.plugin),
  };
  if (s.stream_up !== true) {
    return g.degraded(value, `the stream is not up: ${encoder?.running === true ? 'no keyframe yet' : 'the encoder is not running'}`);
  }
  const notOk = pluginNotOk(gate.plugin);
  return notOk ? g.degraded(value, notOk) : g.ready(value);
}
