/**
 * Trust on first use (LOOKOUT_SSH_ACCEPT_NEW=1) pins a device's key only at an address the registry
 * file names (its ips or ssh_host). An address that comes from a hello is any bus client's word: an
 * unknown key there stays refused, before the password is sent, with the way out in the message.
 * Against the ssh2-based TEST DOUBLE of a device sshd (test/support/ssh-password-server.ts).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import { LookoutError } from '../../../core/src/index.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { startPasswordServer, type PasswordServer } from '../../support/ssh-password-server.js';
import { sshTestHub, type SshTestHub } from '../../unit/hub/plugins/device-ssh/ssh-test-hub.js';
import { api, msg, waitFor } from '../../support/hub-helpers.js';

const PASSWORD = 'pw-first-use-5521';
const SIDECAR = '20260107T000000000Z_000001.json';

describe('device-ssh trust on first use: registry file addresses only', () => {
  let scratch: ScratchDir;
  let recordings: string;
  let byIps: PasswordServer;
  let bySshHost: PasswordServer;
  let byHello: PasswordServer;
  let knownHosts: string;
  let t: SshTestHub;
  const bus = new MemoryBus();

  before(async () => {
    scratch = await scratchDir('device-ssh-first-use-');
    recordings = join(scratch.dir, 'recordings');
    mkdirSync(recordings);
    writeFileSync(join(recordings, SIDECAR), '{}');
    const base = { user: 'root', password: PASSWORD, root: recordings };
    // One at a time, each kept at once: after() stops whichever started.
    byIps = await startPasswordServer(base);
    bySshHost = await startPasswordServer(base);
    byHello = await startPasswordServer(base);
    knownHosts = join(scratch.dir, 'known_hosts');
    t = await sshTestHub({
      dir: join(scratch.dir, 'hub'),
      devices: [
        { device_id: 'cam-ips', ips: ['127.0.0.1'], tool_port: await freePort(), ssh_port: byIps.port, recordings_root: recordings },
        { device_id: 'cam-ssh-host', ssh_host: '127.0.0.1', ssh_port: bySshHost.port, recordings_root: recordings },
        // Named, but with no address: where it is comes from its hello.
        { device_id: 'cam-hello', ssh_port: byHello.port, recordings_root: recordings },
      ],
      env: { DEVICE_PASSWORD: PASSWORD, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts, LOOKOUT_SSH_ACCEPT_NEW: '1' },
      bus,
      deviceNetworks: ['127.0.0.0/8'],
    });
  });

  after(async () => {
    await t?.close();
    await Promise.all([byIps?.stop(), bySshHost?.stop(), byHello?.stop()]);
    await scratch?.cleanup();
  });

  const pinned = () => readFileSync(knownHosts, 'utf8');

  it('pins the key at an address the registry file gives (ips or ssh_host)', async () => {
    assert.equal((await t.ssh.list('cam-ips', 'sftp')).length, 1);
    assert.equal((await t.ssh.list('cam-ssh-host', 'sftp')).length, 1);
    assert.ok(pinned().includes(`${byIps.knownHostsLine}\n`), pinned());
    assert.ok(pinned().includes(`${bySshHost.knownHostsLine}\n`), pinned());
  });

  it('refuses an unknown key at an address a hello announced, before the password is sent', async () => {
    await bus.publish('devices/cam-hello/hello', JSON.stringify(msg.hello('cam-hello', ['127.0.0.1'], await freePort())));
    await waitFor('the hello of cam-hello', async () => {
      const shadows = (await api(t.hub.url, '/fleet/registry')).body.shadows as { device_id: string; ssh: { host: string } | null }[];
      return shadows.find((s) => s.device_id === 'cam-hello')?.ssh?.host === '127.0.0.1';
    });
    for (let i = 0; i < 2; i++) {
      await assert.rejects(t.ssh.list('cam-hello', 'sftp'), (err: unknown) => {
        assert.ok(err instanceof LookoutError, String(err));
        assert.equal(err.code, 'ssh_host_key_unknown', err.message);
        assert.match(err.message, /hello/);
        assert.match(err.message, /registry file/);
        assert.ok(err.message.includes(byHello.knownHostsLine), err.message);
        assert.doesNotMatch(err.message, /LOOKOUT_SSH_ACCEPT_NEW=1 to pin/);
        assert.equal((err.details as { address_from?: string }).address_from, 'hello');
        return true;
      });
    }
    assert.equal(byHello.attempts, 0, 'no password was sent');
    assert.ok(!pinned().includes(`:${byHello.port}]`), pinned());
  });

  it('pins it once the key is added by hand', async () => {
    writeFileSync(knownHosts, `${pinned()}${byHello.knownHostsLine}\n`);
    assert.equal((await t.ssh.list('cam-hello', 'sftp')).length, 1);
  });
});
