/**
 * The recorder with the real detector (sim back-end on the weapon-appears scene) and tracker: chunks
 * are justified by what the detector saw and say why, their detection logs give video_understand
 * its counts, and the describer (an HTTP server in this test, a test double of the host's
 * OpenAI-compatible chat API) adds a description from the counts and one JPEG of the clip without
 * ever changing a count. A describer that fails, and a chunk that no longer decodes, are reasons in
 * the answer, not failures.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { ChunkSidecarSchema, VideoUnderstandResultSchema } from '../../../core/src/contracts/index.js';
import { parseDetsLog, summarize } from '../../../plugins/recorder/src/detection-log.js';
import { startRecorder, waitUntil, type RecorderRig } from '../../unit/plugins/recorder/recorder-harness.js';

interface DescriberCall {
  path: string;
  auth: string | undefined;
  body: any;
}

/** Test double of the host's describer: answers chat completions, or fails when told to. */
async function startDescriberDouble(): Promise<{ url: string; calls: DescriberCall[]; mode: { fail: boolean }; server: Server }> {
  const calls: DescriberCall[] = [];
  const mode = { fail: false };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      calls.push({ path: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(raw) });
      if (mode.fail) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"model overloaded"}');
        return;
      }
      // A describer that miscounts: its number must not reach the counts.
      const content = 'Five people walk past a test pattern; one holds a knife.';
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, calls, mode, server };
}

describe('recorder: detections, justification and video_understand', () => {
  let rig: RecorderRig;
  let describer: Awaited<ReturnType<typeof startDescriberDouble>>;
  const sidecars = () =>
    readdirSync(rig.recordings)
      .filter((n) => n.endsWith('.json'))
      .map((n) => ChunkSidecarSchema.parse(JSON.parse(readFileSync(join(rig.recordings, n), 'utf8'))));

  before(async () => {
    describer = await startDescriberDouble();
    rig = await startRecorder({
      with: ['die-temp', 'camera', 'detector', 'tracker'],
      layer: 'layer2',
      env: {
        CHUNK_SECONDS: '2',
        SIM_SCENARIO: 'weapon-appears',
        RF_DETR_BACKEND: 'sim',
        RF_DETR_STRIDE_FPS: '4',
        VIDEO_DESCRIBER_URL: describer.url,
        VIDEO_DESCRIBER_API_KEY: 'describer-test-key-123',
        VIDEO_DESCRIBER_TIMEOUT_MS: '5000',
      },
    });
    await waitUntil('a justified chunk', () => sidecars().some((s) => s.justified), 40_000);
  });
  after(async () => {
    await rig?.stop();
    describer?.server.close();
  });

  it('justifies chunks by what the detector saw, with the stride and the tracks', async () => {
    const s = sidecars().find((c) => c.justified)!;
    assert.match(s.justified_reason!, /^(weapon: .+|person 0\.\d\d) \(gates: person >= 0\.35, weapon >= 0\.5\)$/);
    assert.ok(s.rfdetr_stride_fps > 1 && s.rfdetr_stride_fps <= 6, `stride ${s.rfdetr_stride_fps}`);
    assert.ok(s.detections.frames_with_detections > 0);
    assert.ok(s.detections.track_ids.length > 0, 'the tracker layer gives track ids');
    const lines = parseDetsLog(readFileSync(join(rig.recordings, s.name.replace('.h265', '.dets.jsonl')), 'utf8'));
    assert.deepEqual(summarize(lines, 0.35), s.detections, 'the summary is its log’s');
    assert.ok(lines.every((l) => l.t >= Date.parse(s.started_at) - 1000 && l.t <= Date.parse(s.ended_at) + 1000));
    // .h265_status follows on its own interval: the sidecar can be there before it counts the chunk.
    const readStatus = () => JSON.parse(readFileSync(join(rig.recordings, '.h265_status'), 'utf8')) as { justified_ok: boolean; justified_chunks: number };
    await waitUntil('.h265_status counts the justified chunk', () => readStatus().justified_chunks >= 1, 20_000);
    assert.equal(readStatus().justified_ok, true);
  });

  it('answers video_understand from the log, with the describer’s text beside the counts', async () => {
    const s = sidecars().find((c) => c.justified)!;
    const before = describer.calls.length;
    const r = VideoUnderstandResultSchema.parse(await rig.call('video_understand', { chunk: s.name }));
    assert.deepEqual(
      [r.person_max_count, r.frames_with_detections, r.track_ids, r.classes],
      [s.detections.person_max_count, s.detections.frames_with_detections, s.detections.track_ids, s.detections.classes],
    );
    assert.equal(r.track_count, s.detections.track_ids.length);
    assert.equal(r.description, 'Five people walk past a test pattern; one holds a knife.');
    assert.equal(r.description_reason, null);
    assert.notEqual(r.person_max_count, 5, 'the describer’s number is not a count');

    const call = describer.calls[before];
    assert.equal(call.path, '/v1/chat/completions');
    assert.equal(call.auth, 'Bearer describer-test-key-123');
    const parts = call.body.messages.at(-1).content;
    const text = parts.find((p: any) => p.type === 'text').text as string;
    assert.match(text, new RegExp(`persons over the gate at most ${s.detections.person_max_count} at once`));
    const image = parts.find((p: any) => p.type === 'image_url').image_url.url as string;
    assert.match(image, /^data:image\/jpeg;base64,/);
    const jpeg = Buffer.from(image.slice(image.indexOf(',') + 1), 'base64');
    assert.deepEqual([jpeg[0], jpeg[1]], [0xff, 0xd8]);
  });

  it('covers a time range across chunks, the one in progress included', async () => {
    const all = sidecars().sort((a, b) => (a.name < b.name ? -1 : 1));
    const start = all[0].started_at;
    const end = new Date(Date.now() + 1000).toISOString();
    const r = VideoUnderstandResultSchema.parse(await rig.call('video_understand', { start, end, describe: false }));
    assert.ok(r.chunks.length >= all.length - 1, `${r.chunks.length} chunks of ${all.length}`);
    assert.ok(r.frames_with_detections >= all.reduce((n, c) => n + c.detections.frames_with_detections, 0) - 1);
    assert.match(r.description_reason!, /not asked/);
    await assert.rejects(rig.call('video_understand', { start: end, end: start }), { code: 'tool_arguments_invalid' });
  });

  it('keeps the counts and gives the reason when the describer fails', async () => {
    describer.mode.fail = true;
    try {
      const s = sidecars().find((c) => c.justified)!;
      const r = VideoUnderstandResultSchema.parse(await rig.call('video_understand', { chunk: s.name }));
      assert.equal(r.description, null);
      assert.match(r.description_reason!, /^describer failed: describer answered HTTP 500/);
      assert.equal(r.person_max_count, s.detections.person_max_count);
    } finally {
      describer.mode.fail = false;
    }
  });

  it('gives a clear reason for a chunk that no longer decodes, and goes on', async () => {
    const s = sidecars()[0];
    writeFileSync(join(rig.recordings, s.name), randomBytes(s.size_bytes));
    const before = describer.calls.length;
    const r = VideoUnderstandResultSchema.parse(await rig.call('video_understand', { chunk: s.name }));
    assert.equal(r.description, null);
    assert.match(r.description_reason!, /^no picture of the clip: chunk \S+\.h265 (holds no picture a decoder can start on|does not decode)/);
    assert.equal(describer.calls.length, before, 'no picture, no describer call');
    assert.ok(rig.runtime.plugins.every((p) => p.state === 'ok'));
  });
});
