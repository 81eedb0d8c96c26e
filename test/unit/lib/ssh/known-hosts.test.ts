import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { fingerprintOf, hostKeyOf, KnownHosts, knownHostsLine, knownHostsName, parseKnownHosts, type HostKey } from '../../../../lib/ssh/known-hosts.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';
import { generateKeyPair } from '../../../support/sshd.js';

const run = promisify(execFile);

describe('known hosts', () => {
  let scratch: ScratchDir;
  let key: HostKey;
  let other: HostKey;
  let rsa: HostKey;
  let n = 0;
  const file = (text: string) => {
    const path = join(scratch.dir, `known_hosts-${++n}`);
    writeFileSync(path, text);
    return path;
  };
  const blobOf = (publicKey: string): HostKey => hostKeyOf(Buffer.from(publicKey.split(' ')[1], 'base64'));

  before(async () => {
    scratch = await scratchDir('known-hosts-');
    key = blobOf((await generateKeyPair(scratch.dir, 'a')).publicKey);
    other = blobOf((await generateKeyPair(scratch.dir, 'b')).publicKey);
    rsa = blobOf((await generateKeyPair(scratch.dir, 'c', 'rsa')).publicKey);
  });
  after(() => scratch.cleanup());

  it('reads the key type from the blob and prints the fingerprint ssh-keygen prints', async () => {
    assert.equal(key.type, 'ssh-ed25519');
    assert.equal(rsa.type, 'ssh-rsa');
    const printed = (await run('ssh-keygen', ['-lf', join(scratch.dir, 'a.pub')])).stdout.split(/\s+/)[1];
    assert.equal(fingerprintOf(key.blob), printed);
    assert.equal(hostKeyOf(Buffer.from([0, 0])).type, 'unknown');
  });

  it('names hosts as OpenSSH does', () => {
    assert.equal(knownHostsName('10.0.0.5', 22), '10.0.0.5');
    assert.equal(knownHostsName('10.0.0.5', 2222), '[10.0.0.5]:2222');
    assert.equal(knownHostsLine('10.0.0.5', 2222, key), `[10.0.0.5]:2222 ssh-ed25519 ${key.blob.toString('base64')}`);
  });

  it('pinned, unknown and changed', () => {
    const b64 = key.blob.toString('base64');
    const known = new KnownHosts(file(`# comment\n\n[10.0.0.5]:2222 ssh-ed25519 ${b64}\n10.0.0.6 ssh-ed25519 ${b64}\n`));
    assert.deepEqual(known.check('10.0.0.5', 2222, key), { status: 'pinned' });
    assert.deepEqual(known.check('10.0.0.6', 22, key), { status: 'pinned' });
    assert.deepEqual(known.check('10.0.0.5', 22, key), { status: 'unknown' });
    assert.deepEqual(known.check('10.0.0.7', 2222, key), { status: 'unknown' });
    assert.deepEqual(known.check('10.0.0.5', 2222, other), { status: 'changed', pinnedTypes: ['ssh-ed25519'] });
    // A key of another type where one type is pinned is a changed key, not a new one.
    assert.deepEqual(known.check('10.0.0.5', 2222, rsa), { status: 'changed', pinnedTypes: ['ssh-ed25519'] });
    assert.deepEqual(known.pinnedTypes('10.0.0.5', 2222), ['ssh-ed25519']);
  });

  it('patterns, negation, host lists, revoked keys and malformed lines', () => {
    const b64 = key.blob.toString('base64');
    const known = new KnownHosts(
      file(
        [
          `10.0.1.*,!10.0.1.9 ssh-ed25519 ${b64}`,
          `cam-?.lan,10.0.2.1 ssh-ed25519 ${b64}`,
          `@revoked * ssh-ed25519 ${other.blob.toString('base64')}`,
          `@cert-authority * ssh-ed25519 ${b64}`,
          'garbage',
          '10.0.3.1 ssh-ed25519 !!notbase64!!',
        ].join('\n'),
      ),
    );
    assert.equal(known.check('10.0.1.4', 22, key).status, 'pinned');
    assert.equal(known.check('10.0.1.9', 22, key).status, 'unknown');
    assert.equal(known.check('CAM-1.lan', 22, key).status, 'pinned');
    assert.equal(known.check('10.0.2.1', 22, key).status, 'pinned');
    assert.equal(known.check('10.0.3.1', 22, key).status, 'unknown');
    assert.equal(known.check('10.0.9.9', 22, other).status, 'changed', 'a revoked key is refused everywhere');
    assert.equal(parseKnownHosts('a b\n').length, 0);
  });

  it('hashed names (ssh-keygen -H) match', async () => {
    const path = file(`[10.0.0.5]:2222 ssh-ed25519 ${key.blob.toString('base64')}\n`);
    await run('ssh-keygen', ['-H', '-f', path]);
    assert.match(readFileSync(path, 'utf8'), /^\|1\|/);
    const known = new KnownHosts(path);
    assert.equal(known.check('10.0.0.5', 2222, key).status, 'pinned');
    assert.equal(known.check('10.0.0.5', 22, key).status, 'unknown');
    assert.equal(known.check('10.0.0.5', 2222, other).status, 'changed');
  });

  it('an absent file pins nothing; pin writes it once, atomically, keeping what was there', async () => {
    const dir = join(scratch.dir, 'pins');
    const path = join(dir, 'known_hosts');
    const known = new KnownHosts(path);
    assert.equal(known.check('10.0.0.5', 2222, key).status, 'unknown');
    const results = await Promise.all([known.pin('10.0.0.5', 2222, key), known.pin('10.0.0.5', 2222, key), known.pin('10.0.0.5', 2222, other)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['pinned', 'pinned', 'changed'],
    );
    assert.equal(readFileSync(path, 'utf8'), `${knownHostsLine('10.0.0.5', 2222, key)}\n`);
    writeFileSync(path, `# operator's note (no newline at the end)`);
    assert.equal((await known.pin('10.0.0.6', 22, other)).status, 'pinned');
    assert.equal(readFileSync(path, 'utf8'), `# operator's note (no newline at the end)\n${knownHostsLine('10.0.0.6', 22, other)}\n`);
    assert.deepEqual(readdirSync(dir), ['known_hosts']);
  });

  it('an edit on disk is seen at the next check', () => {
    const path = file('');
    const known = new KnownHosts(path);
    assert.equal(known.check('10.0.0.5', 22, key).status, 'unknown');
    writeFileSync(path, `${knownHostsLine('10.0.0.5', 22, key)}\n# longer now`);
    assert.equal(known.check('10.0.0.5', 22, key).status, 'pinned');
  });
});
