import { grader, pluginGate, pluginNotOk, pluginValue } from './grade-kit.js';
import type { DeviceFacts } from './device-facts.js';
import type { ModuleResult } from './readiness-schemas.js';

/**
 * recorder: the device's recorder, from get_recording_status and the plugin's state.
 *  - not_applicable: the device reports no recorder plugin
 *  - ready: writing (is_writing_data), storage OK, the plugin ok
 *  - degraded: writing, but storage WARNING or the plugin starting or degraded
 *  - not_ready: not writing (its recommendation says why), storage CRITICAL, the tool failed,
 *    the plugin failed or was skipped; no answer
 */
export function gradeRecorder(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'get_recording_status (is_writing_data, storage_health, latest_chunk) and the recorder plugin state');
  const gate = pluginGate(facts, g, 'recorder');
  if (!gate.applies) return gate.result;
  const rec = facts.recording;
  if (!rec) return g.notReady({ plugin: pluginValue(gate.plugin) }, 'get_recording_status was not asked');
  if (!rec.ok) return g.notReady({ plugin: pluginValue(gate.plugin), code: rec.code }, `get_recording_status failed: ${rec.code}: ${rec.reason}`);
  const r = rec.value;
  const latest = r.latest_chunk as { name?: unknown; started_at?: unknown } | null | undefined;
  const recommendation = typeof r.recommendation === 'string' && r.recommendation ? r.recommendation : null;
  const value = {
    is_writing_data: r.is_writing_data ?? null,
    storage_health: r.storage_health ?? null,
    total_chunks: r.total_chunks ?? null,
    latest_chunk: latest ? { name: latest.name ?? null, started_at: latest.started_at ?? null } : null,
    recommendation,
    plugin: pluginValue(gate.plugin),
  };
  if (r.storage_health === 'CRITICAL') return g.notReady(value, `storage CRITICAL${recommendation ? `: ${recommendation}` : ''}`);
  if (r.is_writing_data !== true) return g.notReady(value, `not writing${recommendation ? `: ${recommendation}` : ' recordings'}`);
  if (r.storage_health !== 'OK') return g.degraded(value, `storage ${String(r.storage_health)}${recommendation ? `: ${recommendation}` : ''}`);
  const notOk = pluginNotOk(gate.plugin);
  return notOk ? g.degraded(value, notOk) : g.ready(value);
}

/**
 * playback: whether the hub can play this device's recordings: it serves GET /fleet/playback-ready
 * (its media plugin) and the device has recorded chunks (its data_manifest on the bus, or the
 * count get_recording_status gives).
 *  - not_applicable: the device reports no recorder plugin (nothing to play)
 *  - ready: chunks to play and the hub serves playback
 *  - degraded: no chunk yet while the recorder writes its first one
 *  - not_ready: the hub serves no playback; no chunk and the recorder not writing; no answer
 */
export function gradePlayback(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'recorded chunks (data_manifest on the bus, get_recording_status) and the hub route GET /fleet/playback-ready');
  const gate = pluginGate(facts, g, 'recorder');
  if (!gate.applies) return gate.result;
  const rec = facts.recording?.ok ? facts.recording.value : null;
  const counted = typeof rec?.total_chunks === 'number' ? rec.total_chunks : 0;
  const chunks = Math.max(facts.manifest.chunks, counted);
  const value = {
    manifest_chunks: facts.manifest.chunks,
    total_chunks: rec ? counted : null,
    newest: facts.manifest.newest,
    hub_serves_playback: facts.hubRoutes?.playback ?? null,
  };
  if (facts.hubRoutes && !facts.hubRoutes.playback) return g.notReady(value, 'this hub serves no GET /fleet/playback-ready (its media plugin is not loaded)');
  if (chunks > 0) return g.ready(value);
  if (rec?.is_writing_data === true) return g.degraded(value, 'nothing to play yet: the recorder is writing its first chunk');
  return g.notReady(
    value,
    `no recorded chunk to play${facts.recording && !facts.recording.ok ? ` (get_recording_status failed: ${facts.recording.reason})` : ''}`,
  );
}
