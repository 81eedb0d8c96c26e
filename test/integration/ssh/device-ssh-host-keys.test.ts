/**
 * Host key pinning against a real sshd: an unknown key is refused with the way to pin it, a
 * changed key is refused (also with trust on first use), LOOKOUT_SSH_ACCEPT_NEW=1 records the key
 * once and the next hub connects with it, a hashed known-hosts line (ssh-keygen -H) is honoured.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { LookoutError } from '../../../core/src/index.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { generateKeyPair, startSshd, type Sshd } from '../../support/sshd.js';
import { sshTestHub, type SshTestHub } from '../../unit/hub/plugins/device-ssh/ssh-test-hub.js';

const run = promisify(execFile);
const CHUNK = '20260103T000000000Z_000001.h265';

describe('device-ssh host keys against a real sshd', () => {
  let sshd: Sshd;
  let scratch: ScratchDir;
  let recordings: string;
  let devices: Record<string, unknown>[];
  let n = 0;
  const hubs: SshTestHub[] = [];

  /** A hub of its own (own data dir) with this known-hosts file and env. */
  const hubWith = async (knownHosts: string | null, env: Record<string, string> = {}) => {
    const dir = join(scratch.dir, `hub-${++n}`);
    const t = await sshTestHub({
      dir,
      devices,
      env: { LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, ...(knownHosts ? { LOOKOUT_SSH_KNOWN_HOSTS: knownHosts } : {}), ...env },
    });
    hubs.push(t);
    return { t, dir };
  };
  const knownHostsFile = (text: string) => {
    const path = join(scratch.dir, `known_hosts-${++n}`);
    writeFileSync(path, text);
    return path;
  };
  const fingerprint = async () => (await run('ssh-keygen', ['-lf', join(sshd.dir, 'ssh_host_key.pub')])).stdout.split(/\s+/)[1];

  before(async () => {
    sshd = await startSshd();
    scratch = await scratchDir('device-ssh-host-keys-');
    recordings = join(scratch.dir, 'recordings');
    mkdirSync(recordings);
    writeFileSync(join(recordings, CHUNK), 'x');
    devices = [{ device_id: 'cam-keys', ips: ['127.0.0.1'], tool_port: await freePort(), ssh_port: sshd.port, recordings_root: recordings }];
  });

  after(async () => {
    for (const t of hubs) await t.close();
    await sshd?.stop();
    await scratch?.cleanup();
  });

  it('an unknown host key is refused, and the refusal says how to pin it', async () => {
    const { t, dir } = await hubWith(null);
    const defaultPath = join(dir, 'ssh_known_hosts');
    await assert.rejects(t.ssh.list('cam-keys', 'sftp'), (err: unknown) => {
      assert.ok(err instanceof LookoutError);
      assert.equal(err.code, 'ssh_host_key_unknown', err.message);
      assert.ok(err.message.includes(defaultPath), err.message);
      assert.ok(err.message.includes('LOOKOUT_SSH_ACCEPT_NEW=1'), err.message);
      assert.ok(err.message.includes(sshd.knownHostsLine), err.message);
      return true;
    });
    const fp = await fingerprint();
    await assert.rejects(t.ssh.read('cam-keys', CHUNK, 10), (err: LookoutError) => err.code === 'ssh_host_key_unknown' && err.message.includes(fp));
    assert.equal(existsSync(defaultPath), false, 'nothing was pinned');
    // The key was refused before authentication: sshd saw no login.
    assert.doesNotMatch(sshd.logs(), /Accepted publickey/);
  });

  it('a changed host key is refused, with or without trust on first use', async () => {
    const other = await generateKeyPair(scratch.dir, `other-${++n}`);
    const path = knownHostsFile(`[127.0.0.1]:${sshd.port} ${other.publicKey}\n`);
    for (const env of [{}, { LOOKOUT_SSH_ACCEPT_NEW: '1' }] as Record<string, string>[]) {
      const { t } = await hubWith(path, env);
      await assert.rejects(t.ssh.list('cam-keys', 'sftp'), (err: LookoutError) => {
        assert.equal(err.code, 'ssh_host_key_changed', err.message);
        return true;
      });
    }
    assert.equal(readFileSync(path, 'utf8'), `[127.0.0.1]:${sshd.port} ${other.publicKey}\n`, 'the pinned key stays');
  });

  it('a key of another host does not pin this one', async () => {
    const path = knownHostsFile(`[127.0.0.1]:${sshd.port + 1} ${sshd.hostPublicKey}\n127.0.0.1 ${sshd.hostPublicKey}\n`);
    const { t } = await hubWith(path);
    await assert.rejects(t.ssh.list('cam-keys', 'sftp'), (err: LookoutError) => err.code === 'ssh_host_key_unknown');
  });

  it('LOOKOUT_SSH_ACCEPT_NEW=1 pins the key on first use, written atomically, and the next hub uses it', async () => {
    const path = join(scratch.dir, 'pinned', 'known_hosts');
    const first = await hubWith(path, { LOOKOUT_SSH_ACCEPT_NEW: '1' });
    const [a, b] = await Promise.all([first.t.ssh.list('cam-keys', 'sftp'), first.t.ssh.list('cam-keys', 'shell')]);
    assert.deepEqual(
      a.map((f) => f.name),
      [CHUNK],
    );
    assert.deepEqual(
      b.map((f) => f.name),
      [CHUNK],
    );
    assert.equal(readFileSync(path, 'utf8'), `${sshd.knownHostsLine}\n`);
    assert.deepEqual(readdirSync(join(scratch.dir, 'pinned')), ['known_hosts'], 'no temporary file left');
    assert.match(await first.t.ring(), /pinned the ssh-ed25519 SSH host key SHA256:/);
    const second = await hubWith(path);
    assert.equal((await second.t.ssh.list('cam-keys', 'sftp')).length, 1);
  });

  it('a hashed known-hosts line (ssh-keygen -H) pins too', async () => {
    const path = knownHostsFile(`${sshd.knownHostsLine}\n`);
    await run('ssh-keygen', ['-H', '-f', path]);
    const text = readFileSync(path, 'utf8');
    assert.match(text, /^\|1\|/);
    assert.ok(!text.includes('127.0.0.1'));
    const { t } = await hubWith(path);
    assert.equal((await t.ssh.list('cam-keys', 'sftp')).length, 1);
  });

  it('an edit of the known-hosts file counts at the next connection', async () => {
    const path = knownHostsFile('');
    const { t } = await hubWith(path, { LOOKOUT_SSH_IDLE_S: '0' });
    await assert.rejects(t.ssh.list('cam-keys', 'sftp'), (err: LookoutError) => err.code === 'ssh_host_key_unknown');
    writeFileSync(path, `${sshd.knownHostsLine}\n`);
    assert.equal((await t.ssh.list('cam-keys', 'sftp')).length, 1);
  });
});
