/**
 * device-ssh against misbehaving devices, played by the ssh2-based TEST DOUBLE of a device sshd
 * (test/support/ssh-password-server.ts): a malformed SFTP packet, data after EOF on the exec channel
 * (either is an 'error' event ssh2 emits with no listener of its own: unheard, it would end the
 * hub), and a slow SFTP start under which a download is aborted (no file may appear after the
 * caller was told the download failed).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LookoutError } from '../../../core/src/index.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startPasswordServer, type PasswordServer } from '../../support/ssh-password-server.js';
import { sshTestHub, type SshTestHub } from '../../unit/hub/plugins/device-ssh/ssh-test-hub.js';
import { api, sleep } from '../../support/hub-helpers.js';

const PASSWORD = 'pw-misbehaving-4410';
const CHUNK = '20260105T101010000Z_000007.h265';
const SIDECAR = '20260105T101010000Z_000007.json';
const SLOW_START_MS = 400;

describe('device-ssh against misbehaving devices (ssh2 test double)', () => {
  let scratch: ScratchDir;
  let recordings: string;
  let downloads: string;
  let good: PasswordServer;
  let broken: PasswordServer;
  let slow: PasswordServer;
  let t: SshTestHub;
  const chunk = Buffer.alloc(300_000).map((_, i) => (i * 31) % 256);

  const failsWith = (code: string, reason?: string) => (err: unknown) => {
    assert.ok(err instanceof LookoutError, String(err));
    assert.equal(err.code, code, err.message);
    if (reason !== undefined) assert.equal((err.details as { reason?: string }).reason, reason, err.message);
    return true;
  };

  before(async () => {
    scratch = await scratchDir('device-ssh-misbehaving-');
    recordings = join(scratch.dir, 'recordings');
    downloads = join(scratch.dir, 'downloads');
    mkdirSync(recordings);
    mkdirSync(downloads);
    writeFileSync(join(recordings, CHUNK), chunk);
    writeFileSync(join(recordings, SIDECAR), '{}');
    const base = { user: 'root', password: PASSWORD, root: recordings };
    good = await startPasswordServer(base);
    broken = await startPasswordServer({ ...base, malformedSftp: true, execDataAfterEof: true });
    slow = await startPasswordServer({ ...base, sftpStartDelayMs: SLOW_START_MS });
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, [good, broken, slow].map((s) => `${s.knownHostsLine}\n`).join(''));
    const device = async (id: string, server: PasswordServer) => ({
      device_id: id,
      ips: ['127.0.0.1'],
      tool_port: await freePort(),
      ssh_port: server.port,
      recordings_root: recordings,
    });
    t = await sshTestHub({
      dir: join(scratch.dir, 'hub'),
      devices: [await device('cam-good', good), await device('cam-broken', broken), await device('cam-slow', slow)],
      env: { DEVICE_PASSWORD: PASSWORD, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts, LOOKOUT_SSH_TIMEOUT_MS: '3000', LOOKOUT_SSH_CONNECT_TIMEOUT_MS: '3000' },
    });
  });

  after(async () => {
    await t?.close();
    await Promise.all([good?.stop(), broken?.stop(), slow?.stop()]);
    await scratch?.cleanup();
  });

  it('a malformed SFTP packet fails the call with ssh_failed, drops the connection, and the hub keeps running', async () => {
    await assert.rejects(t.ssh.list('cam-broken', 'sftp'), failsWith('ssh_failed', 'protocol'));
    assert.equal(broken.connections, 1);
    // The connection the device broke the protocol on is not reused: the next call opens another.
    await assert.rejects(t.ssh.read('cam-broken', SIDECAR, 100), failsWith('ssh_failed', 'protocol'));
    assert.equal(broken.connections, 2);
    await assert.rejects(t.ssh.download('cam-broken', CHUNK, join(downloads, 'broken.h265')), failsWith('ssh_failed', 'protocol'));
    assert.deepEqual(readdirSync(downloads), [], 'no file, no part file');
    assert.match(await t.ring(), /SFTP protocol/);
    // Still running, and still serving the other devices.
    assert.equal((await api(t.hub.url, '/health')).status, 200);
    assert.equal((await t.ssh.list('cam-good', 'sftp')).length, 2);
  });

  it('data after EOF on the exec channel fails the shell listing with ssh_failed, and the hub keeps running', async () => {
    await assert.rejects(t.ssh.list('cam-broken', 'shell'), failsWith('ssh_failed', 'protocol'));
    await assert.rejects(t.ssh.list('cam-broken', 'shell'), failsWith('ssh_failed', 'protocol'));
    await sleep(100);
    assert.equal((await api(t.hub.url, '/health')).status, 200);
    assert.equal((await t.ssh.list('cam-good', 'sftp')).length, 2);
  });

  it('an abort while a slow device starts SFTP: no file appears, also later', async () => {
    // The connection first, so that the abort comes while the SFTP session starts.
    assert.equal((await t.ssh.list('cam-slow', 'sftp')).length, 2);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), SLOW_START_MS / 4);
    const started = Date.now();
    await assert.rejects(t.ssh.download('cam-slow', CHUNK, join(downloads, 'aborted.h265'), controller.signal), failsWith('ssh_failed', 'cancelled'));
    // Long enough for the session to start and the transfer to have ended had it gone on.
    await sleep(Math.max(0, SLOW_START_MS * 3 - (Date.now() - started)));
    assert.deepEqual(readdirSync(downloads), [], 'no file, no part file');
    // The connection is still good.
    const local = join(downloads, 'after.h265');
    assert.equal((await t.ssh.download('cam-slow', CHUNK, local)).bytes, chunk.length);
  });
});
