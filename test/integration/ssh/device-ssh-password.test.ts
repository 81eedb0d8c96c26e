/**
 * device-ssh with DEVICE_PASSWORD, against the ssh2-based TEST DOUBLE of a device sshd
 * (test/support/ssh-password-server.ts: a test cannot set a system password for OpenSSH). The
 * password never appears in an error, a log line, the debug ring or an answer of the hub.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { LookoutError } from '../../../core/src/index.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startPasswordServer, type PasswordServer } from '../../support/ssh-password-server.js';
import { sshTestHub, type SshTestHub } from '../../unit/hub/plugins/device-ssh/ssh-test-hub.js';
import { api } from '../../support/hub-helpers.js';

const PASSWORD = 'pw-S3cr3t-device-7781';
const WRONG = 'pw-Wr0ng-device-9911';
const CHUNK = '20260102T101010000Z_000042.h265';
const SIDECAR = '20260102T101010000Z_000042.json';

describe('device-ssh with a password (ssh2 test double of a device sshd)', () => {
  let scratch: ScratchDir;
  let recordings: string;
  let downloads: string;
  let server: PasswordServer;
  let stalling: PasswordServer;
  let good: SshTestHub;
  let wrong: SshTestHub;
  let none: SshTestHub;
  const errors: LookoutError[] = [];
  const chunk = Buffer.alloc(200_000).map((_, i) => (i * 17) % 256);

  before(async () => {
    scratch = await scratchDir('device-ssh-password-');
    recordings = join(scratch.dir, 'recordings');
    downloads = join(scratch.dir, 'downloads');
    mkdirSync(recordings);
    mkdirSync(downloads);
    writeFileSync(join(recordings, CHUNK), chunk);
    writeFileSync(join(recordings, SIDECAR), '{"fps":10}');
    server = await startPasswordServer({ user: 'root', password: PASSWORD, root: recordings });
    stalling = await startPasswordServer({ user: 'root', password: PASSWORD, root: recordings, stallReads: true });
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${server.knownHostsLine}\n${stalling.knownHostsLine}\n`);
    const devices = [
      { device_id: 'cam-pw', ips: ['127.0.0.1'], tool_port: await freePort(), ssh_port: server.port, recordings_root: recordings },
      { device_id: 'cam-stall', ips: ['127.0.0.1'], tool_port: await freePort(), ssh_port: stalling.port, recordings_root: recordings },
    ];
    const env = { LOOKOUT_SSH_KNOWN_HOSTS: knownHosts, LOOKOUT_SSH_TIMEOUT_MS: '500', LOOKOUT_SSH_CONNECT_TIMEOUT_MS: '2000' };
    good = await sshTestHub({ dir: join(scratch.dir, 'good'), devices, env: { ...env, DEVICE_PASSWORD: PASSWORD } });
    wrong = await sshTestHub({ dir: join(scratch.dir, 'wrong'), devices, env: { ...env, DEVICE_PASSWORD: WRONG } });
    none = await sshTestHub({ dir: join(scratch.dir, 'none'), devices, env: { ...env, DEVICE_PASSWORD: undefined } });
  });

  after(async () => {
    await Promise.all([good?.close(), wrong?.close(), none?.close()]);
    await Promise.all([server?.stop(), stalling?.stop()]);
    await scratch?.cleanup();
  });

  const expectCode = (code: string) => (err: unknown) => {
    assert.ok(err instanceof LookoutError, String(err));
    assert.equal(err.code, code, err.message);
    errors.push(err);
    return true;
  };

  it('lists, reads and downloads with the password', async () => {
    assert.equal(good.ssh.configured, true);
    const files = await good.ssh.list('cam-pw', 'sftp');
    assert.deepEqual(
      files.map((f) => [f.name, f.size]),
      [
        [CHUNK, chunk.length],
        [SIDECAR, 10],
      ],
    );
    assert.equal((await good.ssh.read('cam-pw', SIDECAR, 100)).toString(), '{"fps":10}');
    const local = join(downloads, CHUNK);
    assert.equal((await good.ssh.download('cam-pw', CHUNK, local)).bytes, chunk.length);
    assert.ok(readFileSync(local).equals(chunk));
  });

  it('a wrong password is ssh_auth_failed', async () => {
    await assert.rejects(wrong.ssh.list('cam-pw', 'sftp'), expectCode('ssh_auth_failed'));
    await assert.rejects(wrong.ssh.read('cam-pw', SIDECAR, 100), expectCode('ssh_auth_failed'));
  });

  it('without credentials every call is ssh_not_configured', async () => {
    assert.equal(none.ssh.configured, false);
    await assert.rejects(none.ssh.list('cam-pw', 'sftp'), expectCode('ssh_not_configured'));
    await assert.rejects(none.ssh.download('cam-pw', CHUNK, join(downloads, 'x.h265')), expectCode('ssh_not_configured'));
  });

  it('a device without a shell for us: the shell listing says so', async () => {
    await assert.rejects(good.ssh.list('cam-pw', 'shell'), expectCode('ssh_failed'));
    assert.equal((errors.at(-1)!.details as { reason: string }).reason, 'exec_refused');
  });

  it('a transfer that stalls times out and leaves no file', async () => {
    const started = Date.now();
    await assert.rejects(good.ssh.download('cam-stall', CHUNK, join(downloads, 'stalled.h265')), expectCode('ssh_timeout'));
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    await assert.rejects(good.ssh.read('cam-stall', SIDECAR, 100), expectCode('ssh_timeout'));
    assert.deepEqual(readdirSync(downloads), [CHUNK]);
    // The connection survives a stopped channel: a listing on it still works.
    assert.equal((await good.ssh.list('cam-stall', 'sftp')).length, 2);
  });

  it('an abort or a deadline mid-transfer stops it at once and leaves no file', async () => {
    let started = Date.now();
    await assert.rejects(good.ssh.download('cam-stall', CHUNK, join(downloads, 'deadline.h265'), AbortSignal.timeout(150)), expectCode('ssh_timeout'));
    assert.ok(Date.now() - started < 450, `took ${Date.now() - started} ms`);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    started = Date.now();
    await assert.rejects(good.ssh.download('cam-stall', CHUNK, join(downloads, 'aborted.h265'), controller.signal), expectCode('ssh_failed'));
    assert.ok(Date.now() - started < 450, `took ${Date.now() - started} ms`);
    assert.equal((errors.at(-1)!.details as { reason: string }).reason, 'cancelled');
    assert.deepEqual(readdirSync(downloads), [CHUNK]);
  });

  it('the password appears in no error, log line, ring event or answer', async () => {
    assert.ok(errors.length >= 6);
    const texts = [
      ...errors.map((e) => `${e.message} ${JSON.stringify(e.toBody())} ${e.stack ?? ''} ${inspect(e, { depth: 10 })}`),
      good.logs(),
      wrong.logs(),
      none.logs(),
      await good.ring(),
      await wrong.ring(),
      inspect(good.ssh, { depth: 10 }),
      JSON.stringify(good.ssh),
    ];
    for (const hub of [good, wrong]) {
      for (const path of ['/fleet/registry', '/openapi.json', '/health']) texts.push((await api(hub.hub.url, path)).text);
    }
    assert.match(good.logs(), /device SSH ready/);
    assert.match(await wrong.ring(), /refused the SSH credentials/);
    for (const [i, text] of texts.entries()) {
      const at = text.indexOf(PASSWORD);
      assert.ok(at < 0, `the password leaked in text ${i}: ${text.slice(Math.max(0, at - 300), at + 50)}`);
      assert.ok(!text.includes(WRONG), 'the wrong password leaked');
    }
  });
});
