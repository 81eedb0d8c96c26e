/**
 * The media plugin in a real hub over real files: chunks made by ffmpeg in a device's recordings
 * folder (read through LOOKOUT_MEDIA_LOCAL_RECORDINGS, as a hub beside its devices does), their
 * data_manifest on the bus. playback-ready lists them with play URLs; the URL gives an mp4 that
 * ffprobe reads with the chunk's duration; Range, ETag and 416 behave; 20 concurrent first requests
 * run one transcode; every parameter refuses a path; a corrupt chunk is a clear 422; with the tool
 * server down pull-recording still answers, and with nothing to list from it says why; an incident
 * gets its clip and the video_understand outcome in anomaly_alerts.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import type { ChunkSidecar } from '../../../core/src/contracts/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import media from '../../../hub/plugins/media/src/index.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { makeChunk, probe } from '../../unit/hub/plugins/media/chunk-fixtures.js';
import { api, endClient, mqttClient, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'cam-media-1';

/** A GET whose path goes out byte for byte as given. */
function rawGet(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('media plugin: playback, clips and pull-recording', () => {
  let scratch: ScratchDir;
  let hub: RunningHub;
  let bare: RunningHub;
  let client: MqttClient;
  let chunks: ChunkSidecar[];
  let corruptName: string;

  const transcodes = async () => {
    const r = await api(hub.url, '/debug/events?limit=1000');
    return (r.body.events as { kind: string; message: string }[]).filter((e) => e.kind === 'transcode');
  };

  before(async () => {
    scratch = await scratchDir('media-it-');
    const rec = join(scratch.dir, 'devices', DEVICE, 'recordings');
    const t0 = Date.now() - 60_000;
    chunks = [
      await makeChunk(rec, { seconds: 2, fps: 5, startedAt: new Date(t0), seq: 1, justified: false }),
      await makeChunk(rec, { seconds: 2, fps: 5, startedAt: new Date(t0 + 2000), seq: 2, justified: true }),
    ];
    // Not H.265 at all (a disk error): listed like any chunk, unplayable.
    corruptName = chunks[1].name.replace('_000002', '_000003').replace(/^(\d{8}T\d{6})\d{3}/, '$1999');
    await writeFile(join(rec, corruptName), Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7919) % 251)));
    const registryFile = join(scratch.dir, 'registry.json');
    // Nothing listens on the tool port: the tool server is down.
    await writeFile(
      registryFile,
      JSON.stringify({ devices: [{ device_id: DEVICE, ips: ['127.0.0.1'], tool_port: await freePort(), labels: ['front_door'] }] }),
    );
    const set = await loadHubPluginSet();
    const base = { registryFile, toolTimeoutMs: 1500, essential: set.essential };
    const plugins = [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'media'), media];
    hub = await testHub({
      ...base,
      dataDir: join(scratch.dir, 'hub'),
      plugins,
      env: {
        LOOKOUT_MEDIA_LOCAL_RECORDINGS: join(scratch.dir, 'devices', '{device}', 'recordings'),
        LOOKOUT_MEDIA_STEP_TIMEOUT_MS: '3000',
        LOOKOUT_MEDIA_INCIDENT_WAIT_MS: '0',
        LOOKOUT_MEDIA_TRANSCODES: '2',
      },
    });
    // The same device with neither a local folder nor SSH: nothing can list its recordings.
    await mkdir(join(scratch.dir, 'bare'), { recursive: true });
    bare = await testHub({ ...base, dataDir: join(scratch.dir, 'bare'), plugins, env: { LOOKOUT_MEDIA_STEP_TIMEOUT_MS: '3000' } });
    client = await mqttClient(hub.brokerUrl);
    await publish(client, `devices/${DEVICE}/data_manifest`, { timestamp: new Date().toISOString(), chunks, reason: 'boot' });
    await waitFor(
      'data_manifest in the cache',
      async () => (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices?.[DEVICE]?.recent_chunks?.length === 2,
    );
  });

  after(async () => {
    if (client) await endClient(client);
    await hub?.close();
    await bare?.close();
    await scratch?.cleanup();
  });

  it('lists playable chunks of a role label, newest first, with their justified metadata and URLs', async () => {
    const r = await api(hub.url, '/fleet/playback-ready?shadow=front_door&limit=5');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.count, 2);
    const [newest, older] = r.body.recent_chunks;
    assert.equal(newest.name, chunks[1].name);
    assert.equal(newest.justified, true);
    assert.equal(older.justified, false);
    assert.equal(newest.duration_s, 2);
    assert.equal(newest.keyframe_count, chunks[1].keyframe_count);
    assert.equal(newest.source, 'data_manifest');
    assert.equal(newest.playUrl, `/media/clips/${DEVICE}/${chunks[1].name.replace('.h265', '.mp4')}`);
    assert.equal(newest.playUrlHevc, `/media/clips/${DEVICE}/${chunks[1].name.replace('.h265', '.hevc.mp4')}`);
    assert.deepEqual(r.body.errors, []);
    const justified = await api(hub.url, '/fleet/playback-ready?shadow=front_door&justified=true');
    assert.deepEqual(
      justified.body.recent_chunks.map((c: { name: string }) => c.name),
      [chunks[1].name],
    );
    const none = await api(hub.url, '/fleet/playback-ready?shadow=no_such_label');
    assert.equal(none.body.count, 0);
  });

  it('runs one transcode for 20 concurrent first requests, and the mp4 has the chunk duration', async () => {
    const url = (await api(hub.url, '/fleet/playback-ready?shadow=front_door')).body.recent_chunks[1].playUrl as string;
    const before = (await transcodes()).length;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => fetch(hub.url + url).then(async (res) => ({ res, body: Buffer.from(await res.arrayBuffer()) }))),
    );
    for (const a of answers) assert.equal(a.res.status, 200);
    assert.equal(new Set(answers.map((a) => a.body.toString('base64'))).size, 1);
    assert.equal((await transcodes()).length - before, 1);
    const first = answers[0];
    assert.equal(first.res.headers.get('content-type'), 'video/mp4');
    assert.equal(first.res.headers.get('accept-ranges'), 'bytes');
    assert.equal(Number(first.res.headers.get('content-length')), first.body.length);
    const file = join(scratch.dir, 'got.mp4');
    await writeFile(file, first.body);
    const p = await probe(file);
    assert.equal(p.codec, 'h264');
    assert.ok(Math.abs(p.duration - 2) < 0.25, `duration ${p.duration}`);
    // faststart: the index (moov) comes before the media data (mdat).
    assert.ok(first.body.indexOf('moov') < first.body.indexOf('mdat'));
  });

  it('serves byte ranges (206), refuses ranges outside the file (416) and answers 304 to its ETag', async () => {
    const url = `${hub.url}/media/clips/${DEVICE}/${chunks[1].name.replace('.h265', '.mp4')}`;
    const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
    const part = await fetch(url, { headers: { Range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${whole.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), whole.subarray(100, 200));
    const tail = await fetch(url, { headers: { Range: 'bytes=-10' } });
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), whole.subarray(whole.length - 10));
    const outside = await fetch(url, { headers: { Range: `bytes=${whole.length}-` } });
    assert.equal(outside.status, 416);
    assert.equal(outside.headers.get('content-range'), `bytes */${whole.length}`);
    assert.equal(((await outside.json()) as { error: { code: string } }).error.code, 'range_not_satisfiable');
    const etag = part.headers.get('etag')!;
    assert.ok(etag);
    const cached = await fetch(url, { headers: { 'If-None-Match': etag } });
    assert.equal(cached.status, 304);
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers.get('content-length')), whole.length);
  });

  it('serves the HEVC original remuxed as hvc1', async () => {
    const r = await fetch(`${hub.url}/media/clips/${DEVICE}/${chunks[0].name.replace('.h265', '.hevc.mp4')}`);
    assert.equal(r.status, 200);
    const file = join(scratch.dir, 'got.hevc.mp4');
    await writeFile(file, Buffer.from(await r.arrayBuffer()));
    const p = await probe(file);
    assert.equal(p.codec, 'hevc');
    assert.equal(p.tag, 'hvc1');
    assert.ok(Math.abs(p.duration - 2) < 0.25, `duration ${p.duration}`);
  });

  it('refuses a path in every parameter (400)', async () => {
    const clip = chunks[0].name.replace('.h265', '.mp4');
    for (const path of [
      `/media/clips/${DEVICE}/..%2F..%2Fetc%2Fpasswd.mp4`,
      `/media/clips/${DEVICE}/..%2F${clip}`,
      `/media/clips/${DEVICE}/.${clip}`,
      `/media/clips/${DEVICE}/${clip.replace('.mp4', '.h265')}`,
      `/media/clips/..%2F${DEVICE}/${clip}`,
      `/media/clips/../${clip}`,
      `/media/clips/..%5C..%5Cx/${clip}`,
      `/media/clips/%2E%2E/${clip}`,
    ]) {
      const r = await api(hub.url, path);
      assert.ok(r.status === 400 || r.status === 404, `${path}: ${r.status} ${r.text}`);
      if (r.status === 404) assert.equal(r.body.error.code, 'not_found', `${path}: ${r.text}`); // the router's own: no route for a path of another shape
    }
    // (`%2E%2E` and `..` segments are resolved by the client's URL parser before sending: those reach no route.)
    for (const path of [`/media/clips/..%2F${DEVICE}/${clip}`, `/media/clips/..%5C..%5Cx/${clip}`, `/media/clips/${DEVICE}/..%2F..%2Fetc%2Fpasswd.mp4`]) {
      assert.equal((await api(hub.url, path)).status, 400, path);
    }
    // Sent as written (no URL parser in between): a `..` device segment reaches the route and is refused.
    for (const raw of [`/media/clips/%2E%2E/${clip}`, `/media/clips/../${clip}`, `/media/clips/${DEVICE}/%2E%2E%2F${clip}`]) {
      const status = await rawGet(hub.port, raw);
      assert.ok(status === 400 || status === 404, `${raw}: ${status}`);
    }
    assert.equal(await rawGet(hub.port, `/media/clips/%2E%2E/${clip}`), 400);
    const pull = await api(hub.url, `/pull-recording?target=${encodeURIComponent('../../etc/passwd')}`);
    assert.equal(pull.status, 404); // target_unknown: a target is looked up, never used as a path
    assert.equal(pull.body.error.code, 'target_unknown');
    assert.equal((await api(hub.url, '/pull-recording?target=x&which=..%2F')).status, 400);
    assert.equal((await api(hub.url, '/fleet/playback-ready?limit=..%2F')).status, 400);
    assert.equal((await api(hub.url, `/media/clips/not-a-device/${clip}`)).body.error.code, 'target_unknown');
  });

  it('answers a corrupt chunk with recording_unreadable, and keeps serving', async () => {
    const r = await api(hub.url, `/media/clips/${DEVICE}/${corruptName.replace('.h265', '.mp4')}`);
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.error.code, 'recording_unreadable');
    const missing = await api(hub.url, `/media/clips/${DEVICE}/20200101T000000000Z_000009.mp4`);
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.error.code, 'recording_not_found');
    assert.equal((await fetch(`${hub.url}/media/clips/${DEVICE}/${chunks[1].name.replace('.h265', '.mp4')}`)).status, 200);
  });

  it('pulls the latest and the most recent justified recording with the tool server down', async () => {
    const latest = await fetch(`${hub.url}/pull-recording?target=${DEVICE}&which=latest`);
    // The corrupt chunk is the newest: pulled, it is unplayable and says so.
    assert.equal(latest.status, 422);
    const recent = await fetch(`${hub.url}/pull-recording?target=front_door&which=recent`);
    assert.equal(recent.status, 200);
    assert.equal(recent.headers.get('x-lookout-chunk'), chunks[1].name);
    assert.equal(recent.headers.get('x-lookout-chunk-source'), 'local');
    assert.equal(recent.headers.get('content-type'), 'video/mp4');
    const file = join(scratch.dir, 'pulled.mp4');
    await writeFile(file, Buffer.from(await recent.arrayBuffer()));
    assert.ok(Math.abs((await probe(file)).duration - 2) < 0.25);
    const ring = await api(hub.url, `/debug/events?limit=1000`);
    assert.ok(
      (ring.body.events as { kind: string; details?: { step?: string } }[]).some((e) => e.kind === 'recording_fail' && e.details?.step === 'device'),
      'the failing tool server step is in the ring',
    );
  });

  it('says why when neither the tool server nor SSH can list the recordings', async () => {
    const r = await api(bare.url, `/pull-recording?target=${DEVICE}`);
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error.code, 'recordings_unavailable');
    const steps = (r.body.error.details.attempts as { step: string; code: string }[]).map((a) => `${a.step}:${a.code}`);
    assert.deepEqual(steps, ['device:device_unreachable', 'ssh_sftp:ssh_not_configured', 'ssh_listing:ssh_not_configured']);
    const ready = await api(bare.url, '/fleet/playback-ready?shadow=front_door');
    assert.equal(ready.status, 200);
    // The bare hub got no data_manifest: the device is listed among the errors with every step.
    assert.equal(ready.body.errors[0].code, 'recordings_unavailable');
  });

  it('inventories recorders across the fleet from the cache when the tool server is down', async () => {
    const r = await api(hub.url, '/fleet/recorder-inventory');
    assert.equal(r.status, 200, r.text);
    const d = r.body.devices.find((x: { device_id: string }) => x.device_id === DEVICE);
    assert.equal(d.source, 'cache');
    assert.equal(d.chunk_count, 2);
    assert.equal(d.newest_chunk.name, chunks[1].name);
    assert.equal(d.error.code, 'device_unreachable');
    assert.equal(r.body.totals.device_count, 1);
  });

  it('keeps an incident with its clip and what video_understand said', async () => {
    const at = new Date(Date.parse(chunks[1].started_at) + 1000).toISOString();
    await publish(client, `devices/${DEVICE}/events/incident`, { timestamp: at, type: 'incident', message: 'person in restricted zone' });
    const alert = await waitFor('the incident annotated', async () => {
      const a = (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE].anomaly_alerts[0];
      return a?.video_understanding?.status && a.video_understanding.status !== 'pending' ? a : undefined;
    });
    const u = alert.video_understanding;
    assert.equal(u.chunk, chunks[1].name);
    assert.equal(u.pulled, true);
    assert.equal(u.playUrl, `/media/clips/${DEVICE}/${chunks[1].name.replace('.h265', '.mp4')}`);
    // The device's tool server is down: the understanding itself failed, and says so.
    assert.equal(u.status, 'partial');
    assert.equal(u.error.code, 'device_unreachable');
    const ring = await api(hub.url, '/debug/events?limit=1000');
    assert.ok((ring.body.events as { kind: string }[]).some((e) => e.kind === 'video_understand'));
  });
});
