/**
 * SFTP pulls resumed from an offset (issue 30 item 5) against a real OpenSSH sshd reached through
 * a TCP relay that drops the link mid-file: DEVICE_SSH.downloadFrom keeps every byte that came and
 * a second call reads only the rest (byte-identical at the end); a partial copy of another file (its
 * mtime changed, or longer than the remote file) starts over; and the hub's transfer queue, whose
 * only source is SFTP, resumes a pull cut mid-file from its partial file's length.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LookoutError } from '../../../core/src/index.js';
import type { Transfer } from '../../../hub/plugins/transfers/src/service.js';
import { freePort } from '../../support/free-port.js';
import { api, waitFor } from '../../support/hub-helpers.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { sshTestHub, type SshTestHub } from '../../unit/hub/plugins/device-ssh/ssh-test-hub.js';

const CHUNK = '20260101T000000000Z_000001.h265';
const OTHER = '20260101T000100000Z_000002.h265';

/** A TCP relay to sshd that drops a connection `cutAfter` bytes from the server after each cut asked for (`cutsLeft`) (the link fails mid-file). */
class ByteCutRelay {
  cutsLeft = 0;
  cutsMade = 0;
  cutAfter = 0;
  port = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  constructor(target: number) {
    this.server = createServer((client) => {
      const upstream = connect(target, '127.0.0.1');
      this.sockets.add(client).add(upstream);
      // Counted from the first bytes after a cut is asked for, on a new connection or one the hub's pool keeps.
      let counting = false;
      let sent = 0;
      upstream.on('data', (data: Buffer) => {
        if (!counting && this.cutsLeft > 0) {
          this.cutsLeft--;
          counting = true;
          sent = 0;
        }
        if (!counting) return void client.write(data);
        const room = this.cutAfter - sent;
        sent += data.length;
        if (room > data.length) return void client.write(data);
        counting = false;
        this.cutsMade++;
        upstream.removeAllListeners('data');
        client.write(data.subarray(0, Math.max(0, room)), () => setTimeout(() => client.destroy(), 200));
        upstream.destroy();
      });
      client.on('data', (data: Buffer) => upstream.write(data));
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', () => client.destroy());
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('SFTP pulls resume from an offset (real sshd, a link cut mid-file)', () => {
  let sshd: Sshd;
  let relay: ByteCutRelay;
  let scratch: ScratchDir;
  let recordings: string;
  let local: string;
  let t: SshTestHub;
  const bytes = Buffer.alloc(2_000_000).map((_, i) => (i * 131 + (i >> 9)) % 251);

  before(async () => {
    sshd = await startSshd();
    relay = await new ByteCutRelay(sshd.port).listen();
    scratch = await scratchDir('sftp-resume-');
    recordings = join(scratch.dir, 'recordings');
    local = join(scratch.dir, 'local');
    mkdirSync(recordings);
    mkdirSync(local);
    writeFileSync(join(recordings, CHUNK), bytes);
    writeFileSync(join(recordings, OTHER), bytes.subarray(0, 1000));
    const knownHosts = join(scratch.dir, 'known_hosts');
    // The relay's port serves sshd's host key.
    writeFileSync(knownHosts, `[127.0.0.1]:${relay.port} ${sshd.hostPublicKey}\n`);
    t = await sshTestHub({
      dir: join(scratch.dir, 'hub'),
      // The device's tool server is down: SFTP is the only source.
      devices: [{ device_id: 'cam-sftp', ips: ['127.0.0.1'], tool_port: await freePort(), ssh_port: relay.port, recordings_root: recordings }],
      env: {
        LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath,
        LOOKOUT_SSH_KNOWN_HOSTS: knownHosts,
        LOOKOUT_SSH_CONNECT_TIMEOUT_MS: '3000',
        LOOKOUT_SSH_TIMEOUT_MS: '5000',
        LOOKOUT_MEDIA_LOCAL_RECORDINGS: undefined,
        DEVICE_PASSWORD: undefined,
        LOOKOUT_TRANSFERS_BACKOFF_MS: '100',
        LOOKOUT_TRANSFERS_BACKOFF_MAX_MS: '400',
        LOOKOUT_TRANSFERS_MAX_ATTEMPTS: '3',
      },
    });
  });

  after(async () => {
    await t?.close();
    await relay?.close();
    await sshd?.stop();
    await scratch?.cleanup();
  });

  it('keeps what came before the cut and reads only the rest on the next call', async () => {
    const part = join(local, 'a.part');
    relay.cutsLeft = 1;
    relay.cutAfter = 600_000;
    let start: { size: number; mtimeMs: number } | undefined;
    await assert.rejects(
      t.ssh.downloadFrom('cam-sftp', CHUNK, part, { offset: 0, onStart: (size, mtimeMs) => (start = { size, mtimeMs }) }),
      (e: unknown) => e instanceof LookoutError && e.code.startsWith('ssh_'),
    );
    assert.equal(relay.cutsMade, 1);
    const had = statSync(part).size;
    assert.ok(had > 0 && had < bytes.length, `${had} bytes kept of ${bytes.length}`);
    assert.deepEqual(readFileSync(part), bytes.subarray(0, had));
    assert.equal(start?.size, bytes.length);
    const got = await t.ssh.downloadFrom('cam-sftp', CHUNK, part, { offset: had, mtimeMs: start?.mtimeMs });
    assert.equal(got.resumedFrom, had);
    assert.equal(got.bytes, bytes.length);
    assert.deepEqual(readFileSync(part), bytes);
  });

  it('starts over when the partial copy is of another file (mtime changed, or longer than the remote file)', async () => {
    const part = join(local, 'b.part');
    writeFileSync(part, Buffer.alloc(500, 9));
    const first = await t.ssh.downloadFrom('cam-sftp', OTHER, part, { offset: 500, mtimeMs: 1 });
    assert.equal(first.resumedFrom, 0);
    assert.deepEqual(readFileSync(part), bytes.subarray(0, 1000));
    writeFileSync(part, Buffer.alloc(1500, 9));
    const longer = await t.ssh.downloadFrom('cam-sftp', OTHER, part, { offset: 1500, mtimeMs: first.mtimeMs });
    assert.equal(longer.resumedFrom, 0);
    assert.deepEqual(readFileSync(part), bytes.subarray(0, 1000));
    await assert.rejects(t.ssh.downloadFrom('cam-sftp', '../x.h265', part, { offset: 0 }), { code: 'bad_request' });
    await assert.rejects(t.ssh.downloadFrom('cam-sftp', OTHER, part, { offset: -1 }), { code: 'argument_invalid' });
  });

  it('the transfer queue resumes an SFTP pull cut mid-file from its partial file’s length', async () => {
    utimesSync(join(recordings, CHUNK), new Date(), new Date());
    relay.cutsLeft = 1;
    relay.cutAfter = 700_000;
    relay.cutsMade = 0;
    const posted = await api<{ transfers: Transfer[] }>(t.hub.url, '/fleet/transfers', { json: { device: 'cam-sftp', chunks: [CHUNK] } });
    assert.equal(posted.status, 202, posted.text);
    const end = await waitFor(
      'the SFTP pull finished',
      async () => {
        const x = (await api<Transfer>(t.hub.url, `/fleet/transfers/${posted.body.transfers[0].id}`)).body;
        return ['done', 'failed', 'cancelled'].includes(x.state) ? x : undefined;
      },
      60_000,
      100,
    );
    assert.equal(end.state, 'done', JSON.stringify(end));
    assert.equal(relay.cutsMade, 1);
    assert.equal(end.source, 'sftp');
    assert.equal(end.attempts, 2, JSON.stringify(end));
    assert.ok(end.resumed_from !== null && end.resumed_from > 0, JSON.stringify(end));
    assert.match(end.etag ?? '', /^sftp-mtime:\d+$/);
    assert.deepEqual(readFileSync(join(scratch.dir, 'hub', 'transfers', `${end.id}.data`)), bytes);
  });
});
