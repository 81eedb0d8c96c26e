/**
 * Every SSH command of `lookout` (apply-layer, push-models, deploy, soak-gate, prune-recordings)
 * fails the same clear way, with its exit code, on: a wrong password (against the ssh2 TEST DOUBLE
 * of a device sshd: a test cannot set a system password for OpenSSH), a host key that is not
 * pinned, a host key other than the pinned one, and an unreachable device; and on a full disk (a
 * real small tmpfs as the device's root, behind a real OpenSSH sshd on loopback) each says so with
 * exit 6, except the prune, whose job is to free such a disk.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { freePort } from '../../support/free-port.js';
import { scratchDir, type ScratchDir } from '../../support/scratch-dir.js';
import { cannotMount, mountSmallFilesystem } from '../../support/small-filesystem.js';
import { generateKeyPair, startSshd, type Sshd } from '../../support/sshd.js';
import { startPasswordServer, type PasswordServer } from '../../support/ssh-password-server.js';
import { writeChunks } from '../../unit/plugins/recorder/chunk-fixtures.js';
import { cleanEnv, runLookout } from '../../support/operator-helpers.js';

type Args = (device: string, root: string) => string[];

describe('lookout SSH commands: the same failures, the same exit codes', () => {
  let scratch: ScratchDir;
  let sshd: Sshd;
  let double: PasswordServer;
  let model: string;
  let bundle: string;
  let knownHosts: string;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const commands: Record<string, Args> = {};

  before(async () => {
    scratch = await scratchDir('operator-fail-');
    const served = join(scratch.dir, 'served');
    mkdirSync(served);
    [sshd, double] = await Promise.all([startSshd(), startPasswordServer({ user: 'root', password, root: served })]);
    knownHosts = join(scratch.dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n${double.knownHostsLine}\n`);
    model = join(scratch.dir, 'm.onnx');
    writeFileSync(model, randomBytes(1536 * 1024));
    bundle = join(scratch.dir, 'bundle.tar.gz');
    execFileSync(process.execPath, [join(packageRoot(), 'scripts', 'bundle.mjs'), '--out', bundle, '--version', '0.1.0-fail.1', '--no-modules'], {
      stdio: 'ignore',
    });
    commands['apply-layer'] = (d, r) => ['apply-layer', 'layer2', d, '--root', r];
    commands['push-models'] = (d, r) => ['push-models', d, model, '--root', r];
    commands.deploy = (d, r) => ['deploy', d, '--device-id', 'cam-x', '--bundle', bundle, '--root', r, '--mqtt', 'mqtt://127.0.0.1:1'];
    commands['soak-gate'] = (d, r) => ['soak-gate', d, '0.02', '--interval-s', '0.5', '--root', r];
    commands['prune-recordings'] = (d, r) => ['prune-recordings', d, '--root', r];
  });

  after(async () => {
    await Promise.all([sshd?.stop(), double?.stop()]);
    await scratch?.cleanup();
  });

  const sshEnv = (extra: Record<string, string | undefined> = {}) =>
    cleanEnv({ LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts, ...extra });

  it('a wrong password: exit 3, the password never shown', async () => {
    const wrong = `wrong-${randomBytes(8).toString('hex')}`;
    for (const [name, args] of Object.entries(commands)) {
      const r = await runLookout(
        args(`127.0.0.1:${double.port}`, join(scratch.dir, 'served')),
        cleanEnv({ DEVICE_PASSWORD: wrong, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts }),
      );
      assert.equal(r.code, 3, `${name}: ${r.stderr}`);
      assert.match(r.stderr, /^ssh_auth_failed: \S+ \(root@127\.0\.0\.1:\d+\) refused the SSH credentials/, name);
      assert.equal(`${r.stdout}${r.stderr}`.includes(wrong), false, name);
    }
  });

  it('a host key that is not pinned, or another than the pinned one: exit 4', async () => {
    const empty = join(scratch.dir, 'kh-empty');
    writeFileSync(empty, '');
    const other = await generateKeyPair(scratch.dir, 'other_key');
    const changed = join(scratch.dir, 'kh-changed');
    writeFileSync(changed, `[127.0.0.1]:${sshd.port} ${other.publicKey}\n`);
    const root = join(scratch.dir, 'never-written');
    for (const [name, args] of Object.entries(commands)) {
      const unknown = await runLookout(args(`127.0.0.1:${sshd.port}`, root), sshEnv({ LOOKOUT_SSH_KNOWN_HOSTS: empty }));
      assert.equal(unknown.code, 4, `${name}: ${unknown.stderr}`);
      assert.match(unknown.stderr, /^ssh_host_key_unknown: .*is not pinned: refused/, name);
      const swapped = await runLookout(args(`127.0.0.1:${sshd.port}`, root), sshEnv({ LOOKOUT_SSH_KNOWN_HOSTS: changed }));
      assert.equal(swapped.code, 4, `${name}: ${swapped.stderr}`);
      assert.match(swapped.stderr, /^ssh_host_key_changed: .*not the one pinned/, name);
    }
    assert.equal(existsSync(root), false);
  });

  it('an unreachable device: exit 5', async () => {
    const port = await freePort();
    for (const [name, args] of Object.entries(commands)) {
      const r = await runLookout(args(`127.0.0.1:${port}`, scratch.dir), sshEnv());
      assert.equal(r.code, 5, `${name}: ${r.stderr}`);
      assert.match(r.stderr, /nothing listens for SSH there \(ECONNREFUSED\) — the device is unreachable/, name);
    }
  });

  it('a full disk: apply-layer, push-models, deploy and soak-gate say so with exit 6; prune-recordings frees it', { skip: cannotMount() }, async () => {
    const small = await mountSmallFilesystem({ sizeKiB: 1024, prefix: 'operator-fail-full-' });
    try {
      const root = small.dir;
      // What soak-gate and the prune read, put there before the disk fills.
      mkdirSync(join(root, 'sys/class/thermal/thermal_zone0'), { recursive: true });
      writeFileSync(join(root, 'sys/class/thermal/thermal_zone0/temp'), '40000\n');
      const recordings = join(root, 'data/recordings');
      mkdirSync(recordings, { recursive: true });
      await writeChunks(recordings, 3);
      let frames = 0;
      const status = setInterval(() => {
        frames += 5;
        try {
          writeFileSync(join(recordings, '.h265_status'), JSON.stringify({ encode: { fps: 10, frames } }));
        } catch {
          // the disk is full: the file keeps its last count, which is what a stalled recorder looks like
        }
      }, 100);
      writeFileSync(join(recordings, '.h265_status'), JSON.stringify({ encode: { fps: 10, frames } }));
      small.fill();
      try {
        for (const name of ['apply-layer', 'push-models', 'deploy', 'soak-gate']) {
          const args =
            name === 'soak-gate'
              ? [...commands[name](`127.0.0.1:${sshd.port}`, root), '--min-rate', '0', '--stall-s', '60']
              : commands[name](`127.0.0.1:${sshd.port}`, root);
          const r = await runLookout(args, sshEnv());
          assert.equal(r.code, 6, `${name}: ${r.stderr}`);
          assert.match(r.stderr, /^device_storage_full: /, name);
        }
        // Nothing half-written is left to hold the space.
        assert.deepEqual(
          readdirSync(join(root, 'data/config')).filter((n) => n.endsWith('.tmp')),
          [],
        );
        const pruned = await runLookout([...commands['prune-recordings'](`127.0.0.1:${sshd.port}`, root), '--keep', '1', '--json'], sshEnv());
        assert.equal(pruned.code, 0, pruned.stderr);
        assert.equal((JSON.parse(pruned.stdout) as { removed: unknown[] }).removed.length, 2);
      } finally {
        clearInterval(status);
      }
    } finally {
      await small.unmount();
    }
  });
});
