import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import depthPlugin from '../../../../../plugins/depth/src/index.js';
import { DEPTH_PLUGIN_LAYER } from '../../../../../hub/plugins/readiness/src/grade-depth.js';
import { gradeDevice } from '../../../../../hub/plugins/readiness/src/grade-device.js';
import { CAMERA_PLUGINS, liveStatus, plugins, recordedFacts, recording, withHealth } from './recorded-facts.js';

const VIDEO = ['recorder', 'playback', 'snapshot', 'onvif', 'rtsp'] as const;

describe('readiness of depth fusion and the video modules', () => {
  it('holds the depth layer to the depth plugin’s manifest', () => {
    assert.equal(DEPTH_PLUGIN_LAYER, depthPlugin.layer);
  });

  it('depth_fusion is not_applicable below the depth layer or without the plugin, and then does not lower the grade', () => {
    const names = CAMERA_PLUGINS.filter((p) => p !== 'depth');
    const below = withHealth({ plugins: plugins(names) }, { layer: 'layer2' });
    const r = gradeDevice(below, 'h');
    assert.equal(r.modules.depth_fusion.grade, 'not_applicable');
    assert.equal(r.modules.depth_fusion.evidence.reason, 'the device runs layer2, below the depth layer (layer3)');
    assert.equal(r.grade, 'ready', r.reason ?? '');
    const noPlugin = gradeDevice(withHealth({ plugins: plugins(names) }, { layer: 'layer5' }), 'h').modules.depth_fusion;
    assert.equal(noPlugin.grade, 'not_applicable');
    assert.match(noPlugin.evidence.reason!, /reports no depth plugin at layer5: its image \(camera\) does not carry it/);
  });

  it('depth_fusion follows the plugin: skipped not_ready with its code, starting degraded', () => {
    const skipped = plugins(CAMERA_PLUGINS, { depth: { state: 'skipped', code: 'dependency_failed', message: 'dependency_failed: detector' } });
    const r = gradeDevice(withHealth({ plugins: skipped }), 'h').modules.depth_fusion;
    assert.equal(r.grade, 'not_ready');
    assert.equal(r.evidence.reason, 'its depth plugin is skipped (dependency_failed: dependency_failed: detector)');
    const starting = gradeDevice(withHealth({ plugins: plugins(CAMERA_PLUGINS, { depth: { state: 'starting' } }) }), 'h').modules.depth_fusion;
    assert.equal(starting.grade, 'degraded');
    const ok = gradeDevice(recordedFacts(), 'h').modules.depth_fusion;
    assert.deepEqual((ok.evidence.value as { newest_dets: unknown }).newest_dets, recordedFacts().dets);
  });

  it('an image without video plugins: every video module not_applicable, saying why', () => {
    const base = ['die-temp', 'identity', 'system-health', 'status', 'firmware', 'camera-profile', 'peer-mesh'];
    const r = gradeDevice(withHealth({ plugins: plugins(base) }, { recording: null, liveStatus: null, onvifConnect: null }), 'h');
    for (const m of VIDEO) {
      assert.equal(r.modules[m].grade, 'not_applicable', m);
      assert.match(r.modules[m].evidence.reason!, /reports no (recorder|encode|onvif|rtsp) plugin/, m);
    }
    assert.equal(r.grade, 'ready', r.reason ?? '');
  });

  it('a device that never reported its plugins and does not answer: the video modules not_ready, applicability unknown', () => {
    const r = gradeDevice(recordedFacts({ health: { ok: false, code: 'device_timeout', reason: 'no answer in 15000 ms' }, plugins: null }), 'h');
    for (const m of VIDEO) {
      assert.equal(r.modules[m].grade, 'not_ready', m);
      assert.match(r.modules[m].evidence.reason!, /device_timeout.*whether it runs a .* plugin is not known/, m);
    }
  });

  it('recorder: not writing not_ready with its recommendation, storage WARNING degraded, CRITICAL not_ready', () => {
    const stalled = recordedFacts({ recording: { ok: true, value: recording({ is_writing_data: false, recommendation: 'the encoder exited: restart it' }) } });
    const r = gradeDevice(stalled, 'h').modules.recorder;
    assert.equal(r.grade, 'not_ready');
    assert.equal(r.evidence.reason, 'not writing: the encoder exited: restart it');
    assert.equal((r.evidence.value as { is_writing_data: boolean }).is_writing_data, false);
    const warning = gradeDevice(recordedFacts({ recording: { ok: true, value: recording({ storage_health: 'WARNING', storage_used_pct: 85 }) } }), 'h').modules
      .recorder;
    assert.equal(warning.grade, 'degraded');
    const critical = gradeDevice(
      recordedFacts({ recording: { ok: true, value: recording({ storage_health: 'CRITICAL', recommendation: 'pruned to 30 chunks' }) } }),
      'h',
    );
    assert.equal(critical.modules.recorder.grade, 'not_ready');
    assert.equal(critical.modules.recorder.evidence.reason, 'storage CRITICAL: pruned to 30 chunks');
    const failed = gradeDevice(
      recordedFacts({ recording: { ok: false, code: 'result_invalid', reason: 'get_recording_status answered outside its contract' } }),
      'h',
    );
    assert.equal(failed.modules.recorder.grade, 'not_ready');
  });

  it('playback: chunks ready; the first chunk still being written degraded; a hub without its media plugin not_ready', () => {
    const first = recordedFacts({
      manifest: { chunks: 0, newest: null },
      recording: { ok: true, value: recording({ total_chunks: 0, inventory_count: 0, latest_chunk: null }) },
    });
    const r = gradeDevice(first, 'h');
    assert.equal(r.modules.playback.grade, 'degraded');
    assert.match(r.modules.playback.evidence.reason!, /first chunk/);
    const noMedia = gradeDevice(recordedFacts({ hubRoutes: { playback: false, snapshot: true } }), 'h').modules.playback;
    assert.equal(noMedia.grade, 'not_ready');
    assert.match(noMedia.evidence.reason!, /GET \/fleet\/playback-ready/);
    const nothing = recordedFacts({
      manifest: { chunks: 0, newest: null },
      recording: { ok: true, value: recording({ total_chunks: 0, inventory_count: 0, latest_chunk: null, is_writing_data: false }) },
    });
    assert.equal(gradeDevice(nothing, 'h').modules.playback.grade, 'not_ready');
  });

  it('snapshot: no live port degraded, no snapshot route not_ready, encode failed not_ready', () => {
    const base = recordedFacts();
    const noLive = gradeDevice({ ...base, registered: { ...base.registered!, ports: { ...base.registered!.ports!, live: undefined } } }, 'h').modules.snapshot;
    assert.equal(noLive.grade, 'degraded');
    assert.match(noLive.evidence.reason!, /no live port/);
    assert.equal(gradeDevice(recordedFacts({ hubRoutes: { playback: true, snapshot: false } }), 'h').modules.snapshot.grade, 'not_ready');
    const encodeFailed = plugins(CAMERA_PLUGINS, { encode: { state: 'failed', code: 'encoder_unavailable', message: 'ffmpeg exited' } });
    const r = gradeDevice(withHealth({ plugins: encodeFailed }), 'h').modules.snapshot;
    assert.equal(r.grade, 'not_ready');
    assert.equal(r.evidence.reason, 'its encode plugin is failed (encoder_unavailable: ffmpeg exited)');
  });

  it('onvif: a port that refuses connections not_ready; no port announced degraded', () => {
    const refused = gradeDevice(recordedFacts({ onvifConnect: { ok: false, code: 'connect_failed', reason: '127.0.0.2:8080: ECONNREFUSED' } }), 'h').modules
      .onvif;
    assert.equal(refused.grade, 'not_ready');
    assert.match(refused.evidence.reason!, /ECONNREFUSED/);
    const base = recordedFacts();
    const noPort = gradeDevice({ ...base, onvifConnect: null, registered: { ...base.registered!, ports: { tools: 8765, sidecar: 8777, live: 8766 } } }, 'h')
      .modules.onvif;
    assert.equal(noPort.grade, 'degraded');
    assert.match(noPort.evidence.reason!, /no onvif port/);
  });

  it('rtsp: the stream not up degraded, get_live_status failing not_ready', () => {
    const notUp = gradeDevice(recordedFacts({ liveStatus: { ok: true, value: liveStatus({ stream_up: false, last_keyframe_at: null }) } }), 'h').modules.rtsp;
    assert.equal(notUp.grade, 'degraded');
    assert.equal(notUp.evidence.reason, 'the stream is not up: no keyframe yet');
    const failed = gradeDevice(recordedFacts({ liveStatus: { ok: false, code: 'device_timeout', reason: 'no answer' } }), 'h').modules.rtsp;
    assert.equal(failed.grade, 'not_ready');
    assert.equal(failed.evidence.reason, 'get_live_status failed: device_timeout: no answer');
  });
});
