/**
 * The media plugin over a real OpenSSH sshd (its own config and host key, key authentication) with
 * the device's tool server down: pull-recording finds the chunks with an SFTP listing, fetches the
 * chunk over SFTP (after the device's own /recordings, which the ring records as failing) and
 * answers its mp4; on a server without SFTP it lists with the shell; tools/call
 * answers list_recording_chunks and get_recording_status from an SSH discovery, in the tools' own
 * shapes and marked as such; and with SSH down too, the error says what each step said.
 */
import assert from 'node:assert/strict';
import { copyFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ListRecordingChunksResultSchema, RecordingStatusResultSchema, type ChunkSidecar } from '../../../core/src/contracts/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import deviceSsh from '../../../hub/plugins/device-ssh/src/index.js';
import media from '../../../hub/plugins/media/src/index.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { makeChunk, probe } from '../../unit/hub/plugins/media/chunk-fixtures.js';
import { api, callTool, testHub } from '../../support/hub-helpers.js';

describe('media plugin over SSH with the tool server down', () => {
  let scratch: ScratchDir;
  let sshd: Sshd;
  let shellOnly: Sshd;
  let hub: RunningHub;
  let chunks: ChunkSidecar[];

  before(async () => {
    scratch = await scratchDir('media-ssh-');
    const rec = join(scratch.dir, 'recordings');
    const t0 = Date.now() - 30_000;
    chunks = [
      await makeChunk(rec, { seconds: 2, fps: 5, startedAt: new Date(t0), seq: 1, justified: true }),
      await makeChunk(rec, { seconds: 2, fps: 5, startedAt: new Date(t0 + 2000), seq: 2, justified: false }),
    ];
    sshd = await startSshd();
    shellOnly = await startSshd({ sftp: false });
    // The hub has one key: the second server lets it in too.
    await copyFile(`${sshd.clientKeyPath}.pub`, join(shellOnly.dir, 'authorized_keys'));
    const knownHosts = join(scratch.dir, 'known_hosts');
    await writeFile(knownHosts, `${sshd.knownHostsLine}\n${shellOnly.knownHostsLine}\n`);
    const registryFile = join(scratch.dir, 'registry.json');
    const device = async (id: string, port: number) => ({
      device_id: id,
      ips: ['127.0.0.1'],
      tool_port: await freePort(), // nothing listens: the tool server is down
      ssh_port: port,
      ssh_user: sshd.user,
      recordings_root: rec,
      labels: [id],
    });
    const closedSsh = await freePort();
    await writeFile(
      registryFile,
      JSON.stringify({ devices: [await device('cam-ssh', sshd.port), await device('cam-shell', shellOnly.port), await device('cam-dark', closedSsh)] }),
    );
    const set = await loadHubPluginSet();
    hub = await testHub({
      dataDir: join(scratch.dir, 'hub'),
      registryFile,
      toolTimeoutMs: 1500,
      essential: set.essential,
      plugins: [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'media'), deviceSsh, media],
      env: {
        LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath,
        LOOKOUT_SSH_KNOWN_HOSTS: knownHosts,
        LOOKOUT_SSH_CONNECT_TIMEOUT_MS: '3000',
        LOOKOUT_MEDIA_STEP_TIMEOUT_MS: '5000',
      },
    });
  });

  after(async () => {
    await hub?.close();
    await sshd?.stop();
    await shellOnly?.stop();
    await scratch?.cleanup();
  });

  it('pulls the latest recording over SFTP and answers a playable mp4', async () => {
    const r = await fetch(`${hub.url}/pull-recording?target=cam-ssh&which=latest`);
    assert.equal(r.status, 200, r.status === 200 ? '' : `${await r.text()}\n${sshd.logs().slice(-2000)}`);
    assert.equal(r.headers.get('x-lookout-chunk'), chunks[1].name);
    assert.equal(r.headers.get('x-lookout-chunk-source'), 'ssh_sftp');
    const file = join(scratch.dir, 'pulled.mp4');
    await writeFile(file, Buffer.from(await r.arrayBuffer()));
    const p = await probe(file);
    assert.equal(p.codec, 'h264');
    assert.ok(Math.abs(p.duration - 2) < 0.25, `duration ${p.duration}`);
    // The device's own /recordings was tried first (its tool server is down), and the ring says so.
    const ring = await api(hub.url, '/debug/events?kind=recording_fail&limit=200');
    assert.ok(
      (ring.body.events as { device_id: string; details?: { step?: string; code?: string } }[]).some(
        (e) => e.device_id === 'cam-ssh' && e.details?.step === 'fetch_device' && e.details.code === 'device_unreachable',
      ),
      ring.text,
    );
    const recent = await fetch(`${hub.url}/pull-recording?target=cam-ssh&which=recent`);
    assert.equal(recent.status, 200);
    assert.equal(recent.headers.get('x-lookout-chunk'), chunks[0].name);
    await recent.arrayBuffer();
  });

  it('lists with the shell when the device serves no SFTP', async () => {
    const r = await api(hub.url, '/fleet/playback-ready?shadow=cam-shell');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.devices[0]?.source, 'ssh_listing', r.text);
    assert.equal(r.body.count, 2);
    // DEVICE_SSH reads files over SFTP only: without it the sidecars are not read, names and sizes are listed.
    assert.deepEqual(
      r.body.recent_chunks.map((c: { name: string; size_bytes: number }) => [c.name, c.size_bytes]),
      [chunks[1], chunks[0]].map((c) => [c.name, c.size_bytes]),
    );
  });

  it('answers the chunk tools from an SSH discovery, marked as such', async () => {
    const list = await callTool(hub.url, 'cam-ssh', 'list_recording_chunks', { limit: 1 });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.fallback, true);
    const result = ListRecordingChunksResultSchema.parse(list.body.result);
    assert.equal(result.source, 'ssh_sftp');
    assert.equal(result.total_count, 2);
    assert.equal(result.next_offset, 1);
    assert.equal(result.chunks[0].name, chunks[1].name);
    assert.equal(result.chunks[0].duration_s, 2);
    const justified = await callTool(hub.url, 'cam-ssh', 'list_recording_chunks', { justified: true });
    assert.deepEqual(
      ListRecordingChunksResultSchema.parse(justified.body.result).chunks.map((c) => c.name),
      [chunks[0].name],
    );
    // The recorder just closed its newest chunk (listings never show the `.part` in progress).
    const now = new Date();
    await utimes(join(scratch.dir, 'recordings', chunks[1].name), now, now);
    const status = await callTool(hub.url, 'cam-ssh', 'get_recording_status');
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.fallback, true);
    const s = RecordingStatusResultSchema.parse(status.body.result);
    assert.equal(s.total_chunks, 2);
    assert.equal(s.latest_chunk?.name, chunks[1].name);
    assert.equal(s.is_writing_data, true);
    assert.match(s.recommendation, /discovered over SSH/);
    // No status file, no health message: storage is unknown, and said to be.
    assert.equal(status.body.result.storage_known, false);
    assert.match(s.recommendation, /could not be measured over SSH/);
    const ring = await api(hub.url, '/debug/events?kind=recorder_status&limit=100');
    assert.ok(
      (ring.body.events as { device_id: string }[]).some((e) => e.device_id === 'cam-ssh'),
      'recorder_status learned',
    );
  });

  it('inventories the recorder over SSH when the tool server is down', async () => {
    const r = await api(hub.url, '/fleet/recorder-inventory?shadow=cam-ssh');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.devices[0].source, 'ssh_sftp');
    assert.equal(r.body.devices[0].chunk_count, 2);
  });

  it('says what each step said when the tool server and SSH are both down', async () => {
    const r = await api(hub.url, '/pull-recording?target=cam-dark');
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error.code, 'recordings_unavailable');
    const attempts = r.body.error.details.attempts as { step: string; code: string; message: string }[];
    assert.deepEqual(
      attempts.map((a) => a.step),
      ['device', 'ssh_sftp', 'ssh_listing'],
    );
    assert.equal(attempts[0].code, 'device_unreachable');
    assert.match(attempts[1].code, /^ssh_/);
    const tool = await callTool(hub.url, 'cam-dark', 'list_recording_chunks');
    assert.equal(tool.status, 502, tool.text);
    assert.equal(tool.body.error.code, 'device_unreachable');
    assert.match(tool.body.error.details.fallback_error.code, /^ssh_/);
  });
});
