/**
 * Uploads through the hub's transfer queue (POST /fleet/transfers with kind upload, issue 30 item 5)
 * with real parts: a hub whose media plugin pulls a chunk from a local recordings folder, and a real
 * tus server (@tus/server on 127.0.0.1) behind a relay that cuts the upload mid-request. The pulled
 * chunk is sent to the configured destination and resumed from the destination's offset after the
 * cut, byte-identical at the end; a destination outside the configured prefixes is refused before
 * anything is queued (no request makes the hub upload to another host); an unknown or undone pull is
 * refused with its typed error.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import type { Transfer } from '../../../hub/plugins/transfers/src/service.js';
import { freePort } from '../../support/free-port.js';
import { api, testHub, waitFor } from '../../support/hub-helpers.js';
import { TusDestination } from '../../support/tus-destination.js';

const DEVICE = 'cam-upload';
const CHUNK = '20260101T000000Z_0001.h265';
const NO_SSH = { DEVICE_PASSWORD: undefined, LOOKOUT_SSH_KEY_FILE: undefined };

describe('the transfer queue uploads pulled recordings to a configured tus destination', () => {
  let dir: string;
  let hub: RunningHub;
  let dest: TusDestination;
  const bytes = randomBytes(300_000);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'transfer-upload-'));
    dest = await TusDestination.start(join(dir, 'destination'));
    mkdirSync(join(dir, 'recordings', DEVICE), { recursive: true });
    writeFileSync(join(dir, 'recordings', DEVICE, CHUNK), bytes);
    const registryFile = join(dir, 'registry.json');
    // The device's tool server is down: the local recordings folder is the source.
    writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: DEVICE, ips: ['127.0.0.1'], tool_port: await freePort() }] }));
    hub = await testHub({
      dataDir: join(dir, 'hub'),
      registryFile,
      toolTimeoutMs: 5000,
      env: {
        ...NO_SSH,
        LOOKOUT_MEDIA_LOCAL_RECORDINGS: join(dir, 'recordings', '{device}'),
        LOOKOUT_TRANSFERS_BACKOFF_MS: '100',
        LOOKOUT_TRANSFERS_BACKOFF_MAX_MS: '400',
        LOOKOUT_TRANSFERS_MAX_ATTEMPTS: '3',
        LOOKOUT_TRANSFERS_UPLOAD_URL: dest.url,
        LOOKOUT_TRANSFERS_UPLOAD_CHUNK_BYTES: String(64 * 1024),
      },
    });
  });

  after(async () => {
    await hub?.close();
    await dest?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const settled = (id: string) =>
    waitFor(
      `${id} finished`,
      async () => {
        const t = (await api<Transfer>(hub.url, `/fleet/transfers/${id}`)).body;
        return ['done', 'failed', 'cancelled'].includes(t.state) ? t : undefined;
      },
      60_000,
      100,
    );

  it('pulls a chunk, uploads it cut mid-request and resumed from the destination’s offset, byte-identical', async () => {
    const pulled = await api<{ transfers: Transfer[] }>(hub.url, '/fleet/transfers', { json: { device: DEVICE, chunks: [CHUNK] } });
    assert.equal(pulled.status, 202, pulled.text);
    const pull = await settled(pulled.body.transfers[0].id);
    assert.equal(pull.state, 'done', JSON.stringify(pull));

    dest.cutsLeft = 1;
    dest.cutAfter = 150_000;
    const posted = await api<{ transfers: Transfer[] }>(hub.url, '/fleet/transfers', { json: { kind: 'upload', transfers: [pull.id] } });
    assert.equal(posted.status, 202, posted.text);
    const [queued] = posted.body.transfers;
    assert.equal(queued.kind, 'upload');
    assert.equal(queued.destination, dest.url);
    const end = await settled(queued.id);
    assert.equal(end.state, 'done', JSON.stringify(end));
    assert.equal(dest.cutsMade, 1);
    assert.equal(end.attempts, 2);
    assert.ok(end.resumed_from !== null && end.resumed_from > 0, JSON.stringify(end));
    assert.equal(end.bytes_done, bytes.length);
    assert.deepEqual((await dest.uploads()).get(CHUNK), bytes);
    const list = await api(hub.url, '/fleet/transfers?state=done');
    assert.ok((list.body.transfers as Transfer[]).some((t) => t.id === end.id && t.kind === 'upload'));
  });

  it('refuses a destination outside the configured ones and pulls it cannot upload, queuing nothing', async () => {
    const pull = (await api(hub.url, '/fleet/transfers?state=done')).body.transfers.find((t: Transfer) => t.kind === 'pull') as Transfer;
    const count = async () => ((await api(hub.url, '/fleet/transfers')).body.transfers as Transfer[]).length;
    const before = await count();
    for (const destination of ['http://127.0.0.2:9/files', `${dest.url}-elsewhere`, 'http://evil.example/files']) {
      const r = await api(hub.url, '/fleet/transfers', { json: { kind: 'upload', transfers: [pull.id], destination } });
      assert.equal(r.status, 403, r.text);
      assert.equal(r.body.error.code, 'target_not_allowed');
    }
    const creds = await api(hub.url, '/fleet/transfers', {
      json: { kind: 'upload', transfers: [pull.id], destination: dest.url.replace('http://', 'http://u:p@') },
    });
    assert.equal(creds.status, 400, creds.text);
    const unknown = await api(hub.url, '/fleet/transfers', { json: { kind: 'upload', transfers: [pull.id, 't-0000000000000000'] } });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.code, 'transfers.transfer_not_found');
    const mixed = await api(hub.url, '/fleet/transfers', { json: { kind: 'upload', transfers: [pull.id], device: DEVICE } });
    assert.equal(mixed.status, 400, mixed.text);
    assert.equal(await count(), before, 'nothing was queued');
  });
});
