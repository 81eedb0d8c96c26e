/**
 * The SSH connection pool against a real sshd: one connection per device reused, a global bound on
 * connections (an idle one makes room), callers past the waiting bound refused at once with
 * reason busy, and waiting callers served when a connection comes free.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LookoutError } from '../../../core/src/index.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { sshTestHub, type SshTestHub } from '../../unit/hub/plugins/device-ssh/ssh-test-hub.js';

const SIDECAR = '20260104T000000000Z_000001.json';

describe('device-ssh connection pool against a real sshd', () => {
  let sshd: Sshd;
  let scratch: ScratchDir;
  let strict: SshTestHub;
  let patient: SshTestHub;
  const logins = () =>
    sshd
      .logs()
      .split('\n')
      .filter((l) => l.includes('Accepted publickey')).length;
  const isBusy = (r: PromiseSettledResult<unknown>) =>
    r.status === 'rejected' &&
    r.reason instanceof LookoutError &&
    r.reason.code === 'ssh_failed' &&
    (r.reason.details as { reason?: string }).reason === 'busy';

  before(async () => {
    sshd = await startSshd();
    scratch = await scratchDir('device-ssh-pool-');
    const recordings = join(scratch.dir, 'recordings');
    mkdirSync(recordings);
    writeFileSync(join(recordings, SIDECAR), '{}');
    const knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    const at = { ips: ['127.0.0.1'], tool_port: await freePort(), ssh_port: sshd.port, recordings_root: recordings };
    const devices = [
      { device_id: 'cam-a', ...at },
      { device_id: 'cam-b', ...at },
    ];
    const env = { LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts, LOOKOUT_SSH_MAX_CONNECTIONS: '1' };
    strict = await sshTestHub({ dir: join(scratch.dir, 'strict'), devices, env: { ...env, LOOKOUT_SSH_MAX_WAITING: '0' } });
    patient = await sshTestHub({ dir: join(scratch.dir, 'patient'), devices, env: { ...env, LOOKOUT_SSH_MAX_WAITING: '4' } });
  });

  after(async () => {
    await strict?.close();
    await patient?.close();
    await sshd?.stop();
    await scratch?.cleanup();
  });

  it('a second device while the only connection is busy: refused at once when nobody may wait', async () => {
    const results = await Promise.allSettled([strict.ssh.list('cam-a', 'sftp'), strict.ssh.list('cam-b', 'sftp')]);
    assert.equal(results[0].status, 'fulfilled', String((results[0] as PromiseRejectedResult).reason));
    assert.ok(isBusy(results[1]), String((results[1] as PromiseRejectedResult).reason));
  });

  it('an idle connection makes room for another device', async () => {
    const before = logins();
    await strict.ssh.list('cam-a', 'sftp');
    await strict.ssh.list('cam-b', 'sftp');
    await strict.ssh.list('cam-a', 'sftp');
    assert.equal(logins() - before, 2, 'cam-a reused its connection first, then each device needed a new one');
  });

  it('operations on one connection are bounded too', async () => {
    await strict.ssh.list('cam-a', 'sftp');
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => strict.ssh.read('cam-a', SIDECAR, 100)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 6);
    assert.equal(results.filter(isBusy).length, 2);
  });

  it('waiting callers are served in turn when they may wait', async () => {
    const results = await Promise.allSettled([
      patient.ssh.list('cam-a', 'sftp'),
      patient.ssh.list('cam-b', 'sftp'),
      patient.ssh.read('cam-a', SIDECAR, 100),
      patient.ssh.list('cam-b', 'shell'),
    ]);
    for (const r of results) assert.equal(r.status, 'fulfilled', r.status === 'rejected' ? String(r.reason) : '');
  });
});
