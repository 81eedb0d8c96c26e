/**
 * The "Pinning a device's SSH host key" examples of docs/operator-guide.md, run: its ssh-keyscan
 * line against a real sshd on a port other than 22 writes the `[host]:port` lines the hub's known-hosts reader pins, and
 * its registry example is a valid registry file naming that SSH address.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { KnownHosts, hostKeyOf } from '../../../lib/ssh/known-hosts.js';
import { RegistryFileSchema } from '../../../hub/plugins/registry/src/registry-file.js';
import { startSshd, type Sshd } from '../../support/sshd.js';

const run = promisify(execFile);

/** The fenced blocks of one section of docs/operator-guide.md, by language. */
async function readmeSection(heading: string): Promise<{ lang: string; body: string }[]> {
  const text = await readFile(join(packageRoot(), 'docs', 'operator-guide.md'), 'utf8');
  const start = text.indexOf(`\n### ${heading}\n`);
  assert.ok(start >= 0, `docs/operator-guide.md has a section "${heading}"`);
  const next = text.slice(start + 1).search(/\n#{2,3} /);
  const section = next < 0 ? text.slice(start) : text.slice(start, start + 1 + next);
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], body: m[2] }));
}

describe("README: pinning a device's SSH host key", () => {
  let sshd: Sshd;
  let dir: string;
  before(async () => {
    sshd = await startSshd({ sftp: false });
    dir = await mkdtemp(join(tmpdir(), 'readme-ssh-'));
  });
  after(async () => {
    await sshd?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('its ssh-keyscan line writes [host]:port lines the hub pins, and ssh-keygen -lf reads them', async () => {
    const blocks = await readmeSection("Pinning a device's SSH host key");
    const shell = blocks.find((b) => b.lang === 'sh');
    assert.ok(shell, 'a shell example');
    const lines = shell.body.split('\n');
    const scan = lines.find((l) => l.startsWith('ssh-keyscan '));
    const list = lines.find((l) => l.startsWith('ssh-keygen -lf '));
    assert.ok(scan && list, shell.body);
    // The guide's line, aimed at the test's sshd and the test's file.
    const file = join(dir, 'ssh_known_hosts');
    const command = scan
      .replace(/-p \d+ \S+/, `-p ${sshd.port} ${sshd.host}`)
      .replace(/>> \S+/, `>> ${file}`)
      .replace(/#.*$/, '');
    await run('bash', ['-c', command]);
    const written = await readFile(file, 'utf8');
    assert.match(written, new RegExp(`^\\[${sshd.host.replace(/\./g, '\\.')}\\]:${sshd.port} ssh-ed25519 `, 'm'));
    const key = hostKeyOf(Buffer.from(sshd.hostPublicKey.split(' ')[1], 'base64'));
    const known = new KnownHosts(file);
    assert.deepEqual(known.check(sshd.host, sshd.port, key), { status: 'pinned' });
    assert.equal(known.check(sshd.host, 22, key).status, 'unknown', 'a key is pinned for its port only');
    const fingerprints = await run('bash', ['-c', list.replace(/\S*ssh_known_hosts/, file).replace(/#.*$/, '')]);
    assert.match(fingerprints.stdout, /SHA256:/);
  });

  it('its registry example is a valid registry file with the SSH fields', async () => {
    const json = (await readmeSection("Pinning a device's SSH host key")).find((b) => b.lang === 'json');
    assert.ok(json, 'a registry example');
    const file = RegistryFileSchema.parse(JSON.parse(json.body));
    const [device] = file.devices;
    assert.equal(device.ssh_port, 2222);
    assert.equal(device.ssh_user, 'root');
    assert.equal(device.recordings_root, '/data/recordings');
  });
});
