/**
 * The recorder on a real H.265 stream (ffmpeg libx265, 320x240 at 5 fps, a keyframe a second, chunks
 * of 1 s): every chunk ffprobe reads, with the pictures, key frames and duration its sidecar says; the
 * status file, the rolling manifest and data_manifest (boot, after chunks, on cmd/data_manifest) say
 * the same; the tools answer in their schemas; and an encoder that dies is named in the advice.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ChunkSidecarSchema,
  DataManifestMessageSchema,
  ListRecordingChunksResultSchema,
  RecordingStatusResultSchema,
  VideoUnderstandResultSchema,
} from '../../../core/src/contracts/index.js';
import { ffprobeChunk, mp4Duration, startRecorder, waitUntil, type RecorderRig } from '../../unit/plugins/recorder/recorder-harness.js';

describe('recorder: chunks of a real H.265 stream', () => {
  let rig: RecorderRig;
  before(async () => {
    rig = await startRecorder();
    await waitUntil('four complete chunks', () => rig.manifests().filter((m) => m.reason === 'chunk').length >= 4, 30_000);
  });
  after(async () => {
    await rig?.stop();
  });

  const chunkNames = () => readdirSync(rig.recordings).filter((n) => n.endsWith('.h265'));

  it('writes chunks that ffprobe reads, with the frames, key frames and duration of their sidecars', () => {
    const names = chunkNames();
    assert.ok(names.length >= 4, `chunks: ${names.join(', ')}`);
    for (const name of names) {
      assert.match(name, /^\d{8}T\d{9}Z_\d{6}\.h265$/);
      const sidecar = ChunkSidecarSchema.parse(JSON.parse(readFileSync(join(rig.recordings, name.replace('.h265', '.json')), 'utf8')));
      const probe = ffprobeChunk(join(rig.recordings, name), sidecar.fps);
      assert.equal(probe.frames, sidecar.frame_count, `${name} frames`);
      assert.equal(probe.keyframes, sidecar.keyframe_count, `${name} key frames`);
      assert.ok(Math.abs(probe.duration_s - sidecar.duration_s) < 1e-6, `${name} duration ${probe.duration_s} vs ${sidecar.duration_s}`);
      const mp4 = mp4Duration(join(rig.recordings, name), sidecar.fps, join(rig.dataDir, 'probe.mp4'));
      assert.ok(Math.abs(mp4 - sidecar.duration_s) <= 1 / sidecar.fps + 1e-3, `${name} mp4 ${mp4} s vs ${sidecar.duration_s} s`);
      // Cut on the first keyframe after CHUNK_SECONDS (1 s = 5 pictures, a keyframe every 5): 1 s each.
      assert.deepEqual([sidecar.frame_count, sidecar.keyframe_count, sidecar.duration_s], [5, 1, 1]);
      assert.deepEqual([sidecar.codec, sidecar.width, sidecar.height, sidecar.fps], ['hevc', 320, 240, 5]);
      assert.equal(sidecar.size_bytes, readFileSync(join(rig.recordings, name)).length);
      assert.equal(sidecar.justified, false, 'no detector: nothing justifies it');
      assert.equal(sidecar.justified_reason, null);
      assert.equal(sidecar.rfdetr_stride_fps, 0);
      // Wall time: the last picture's capture plus one frame period (the pictures come about 200 ms apart).
      const span = Date.parse(sidecar.ended_at) - Date.parse(sidecar.started_at);
      assert.ok(span >= 200 && span <= 3000, `${name} spans ${span} ms`);
      assert.ok(existsSync(join(rig.recordings, name.replace('.h265', '.dets.jsonl'))), 'its detection log, empty without a detector');
    }
  });

  it('keeps the chunk in progress under a hidden .part name only', () => {
    const parts = readdirSync(rig.recordings).filter((n) => n.endsWith('.part'));
    assert.ok(
      parts.every((p) => p.startsWith('.')),
      parts.join(', '),
    );
  });

  it('writes .h265_status and recent_manifest.jsonl', async () => {
    const status = await waitUntil('a status file after the chunks', () => {
      const s = JSON.parse(readFileSync(join(rig.recordings, '.h265_status'), 'utf8'));
      return s.total_chunks >= 4 ? s : undefined;
    });
    assert.equal(status.version, 1);
    assert.equal(status.is_writing, true);
    assert.equal(status.justified_ok, false, 'no detector');
    assert.ok(['OK', 'WARNING', 'CRITICAL'].includes(status.storage.health));
    assert.ok(status.encode.frames >= 20 && status.encode.dropped === 0, JSON.stringify(status.encode));
    assert.deepEqual([status.encode.codec, status.encode.width, status.encode.height, status.encode.fps], ['hevc', 320, 240, 5]);
    assert.equal(status.last_error, null);
    const lines = readFileSync(join(rig.recordings, 'recent_manifest.jsonl'), 'utf8').trim().split('\n');
    const entries = lines.map((l) => ChunkSidecarSchema.parse(JSON.parse(l)));
    assert.ok(entries.length >= 4);
    assert.deepEqual(
      entries.map((e) => e.name),
      [...entries.map((e) => e.name)].sort(),
      'oldest first',
    );
    for (const e of entries) assert.ok(existsSync(join(rig.recordings, e.name)));
  });

  it('publishes data_manifest on boot, after each chunk and on cmd/data_manifest', async () => {
    const boot = rig.manifests().find((m) => m.reason === 'boot');
    assert.ok(boot, 'a boot manifest');
    for (const m of rig.manifests()) DataManifestMessageSchema.parse(m);
    const before = rig.manifests().length;
    await rig.bus.publish(`devices/${rig.id}/cmd/data_manifest`, JSON.stringify({ request_id: 'r-1', limit: 2 }));
    const answer = await waitUntil('the requested manifest', () => rig.manifests().find((m) => m.request_id === 'r-1'));
    assert.equal(answer.reason, 'request');
    assert.equal(answer.chunks.length, 2);
    assert.ok(answer.total_chunks >= 4);
    assert.ok(answer.chunks[0].name > answer.chunks[1].name, 'newest first');
    // A command with a misspelt field is refused, not half-run.
    await rig.bus.publish(`devices/${rig.id}/cmd/data_manifest`, JSON.stringify({ request_id: 'r-2', limt: 2 }));
    await rig.bus.publish(`devices/${rig.id}/cmd/data_manifest`, 'not json');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(
      rig.manifests().find((m) => m.request_id === 'r-2'),
      undefined,
    );
    assert.ok(rig.manifests().length > before);
    assert.deepEqual(
      rig.runtime.plugins.filter((p) => p.state !== 'ok').map((p) => p.name),
      [],
    );
  });

  it('answers get_recording_status, list_recording_chunks and video_understand in their schemas', async () => {
    const status = RecordingStatusResultSchema.parse(await rig.call('get_recording_status'));
    assert.ok(status.total_chunks >= 4);
    assert.equal(status.is_writing_data, true);
    assert.ok(status.latest_chunk && chunkNames().includes(status.latest_chunk.name));
    assert.ok(status.recommendation === '' || status.recommendation.startsWith('storage'), status.recommendation);

    const page1 = ListRecordingChunksResultSchema.parse(await rig.call('list_recording_chunks', { limit: 2 }));
    assert.equal(page1.source, 'device');
    assert.equal(page1.chunks.length, 2);
    assert.ok(page1.chunks[0].name > page1.chunks[1].name, 'newest first');
    assert.equal(page1.next_offset, 2);
    const page2 = ListRecordingChunksResultSchema.parse(await rig.call('list_recording_chunks', { limit: 2, offset: 2 }));
    assert.ok(page2.chunks[0].name < page1.chunks[1].name);
    const justified = ListRecordingChunksResultSchema.parse(await rig.call('list_recording_chunks', { justified: true }));
    assert.deepEqual([justified.total_count, justified.chunks.length, justified.next_offset], [0, 0, null]);
    await assert.rejects(rig.call('list_recording_chunks', { limit: 0 }), { code: 'tool_arguments_invalid' });

    const understood = VideoUnderstandResultSchema.parse(await rig.call('video_understand', { chunk: page1.chunks[1].name }));
    assert.deepEqual([understood.chunks, understood.frames_with_detections, understood.track_count], [[page1.chunks[1].name], 0, 0]);
    assert.equal(understood.description, null);
    assert.match(understood.description_reason!, /no describer configured/);
    await assert.rejects(rig.call('video_understand', { chunk: '20990101T000000000Z_000001.h265' }), { code: 'recording_not_found' });
    await assert.rejects(rig.call('video_understand', { chunk: '../etc/passwd.h265' }), { code: 'tool_arguments_invalid' });
    await assert.rejects(rig.call('video_understand', {}), { code: 'tool_arguments_invalid' });
  });

  it('says recording stalled since when, and why, once the encoder exits', async () => {
    rig.encoder.child()!.kill('SIGKILL');
    const status = await waitUntil('a stalled recommendation', async () => {
      const s = RecordingStatusResultSchema.parse(await rig.call('get_recording_status'));
      return s.recommendation.includes('stalled') ? s : undefined;
    });
    assert.equal(status.is_writing_data, false);
    assert.match(status.recommendation, /^recording stalled since \d{4}-\d\d-\d\dT[\d:.]+Z: encoder exited with ffmpeg exited with SIGKILL/);
    const file = await waitUntil('the status file to say so', () => {
      const s = JSON.parse(readFileSync(join(rig.recordings, '.h265_status'), 'utf8'));
      return s.is_writing === false && s.last_error ? s : undefined;
    });
    assert.match(file.last_error.message, /SIGKILL/);
    assert.equal(file.encode.running, false);
    // The chunk in progress was completed when the encoder went: no .part is left.
    await waitUntil('no part left', () => readdirSync(rig.recordings).every((n) => !n.endsWith('.part')));
  });
});
