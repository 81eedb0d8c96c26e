import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { inspect, promisify } from 'node:util';
import { LookoutError } from '../../../../core/src/index.js';
import { SshCredentials } from '../../../../lib/ssh/ssh-credentials.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';
import { generateKeyPair } from '../../../support/sshd.js';

const run = promisify(execFile);

describe('SSH credentials', () => {
  let scratch: ScratchDir;
  let plainKey: string;
  let encryptedKey: string;

  before(async () => {
    scratch = await scratchDir('ssh-credentials-');
    plainKey = (await generateKeyPair(scratch.dir, 'plain')).path;
    encryptedKey = join(scratch.dir, 'encrypted');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'key-passphrase-31', '-f', encryptedKey]);
  });
  after(() => scratch.cleanup());

  const configInvalid = (re: RegExp) => (err: unknown) => {
    assert.ok(err instanceof LookoutError && err.code === 'config_invalid', String(err));
    assert.match(err.message, re);
    assert.ok(!err.message.includes('PRIVATE KEY') && !JSON.stringify(err.toBody()).includes('PRIVATE KEY'));
    return true;
  };

  it('a password, a key, both or none', () => {
    assert.deepEqual(SshCredentials.load({}).kinds, []);
    assert.equal(SshCredentials.load({}).configured, false);
    assert.deepEqual(SshCredentials.load({ password: 'pw-1' }).kinds, ['password']);
    assert.deepEqual(SshCredentials.load({ keyFile: plainKey }).kinds, ['key']);
    const both = SshCredentials.load({ password: 'pw-1', keyFile: plainKey });
    assert.deepEqual(both.kinds, ['password', 'key']);
    const options = both.connectOptions();
    assert.equal(options.password, 'pw-1');
    assert.ok(options.privateKey?.equals(readFileSync(plainKey)));
    assert.equal(options.tryKeyboard, true);
    assert.deepEqual(both.keyboardAnswers(['Password: ']), ['pw-1']);
  });

  it('an encrypted key needs its passphrase', () => {
    assert.throws(() => SshCredentials.load({ keyFile: encryptedKey }), configInvalid(/LOOKOUT_SSH_KEY_PASSPHRASE/));
    assert.deepEqual(SshCredentials.load({ keyFile: encryptedKey, passphrase: 'key-passphrase-31' }).kinds, ['key']);
  });

  it('a missing or unusable key file fails with the file named, never its content', () => {
    assert.throws(() => SshCredentials.load({ keyFile: join(scratch.dir, 'absent') }), configInvalid(/cannot be read: ENOENT/));
    const notKey = join(scratch.dir, 'not-a-key');
    writeFileSync(notKey, '-----BEGIN OPENSSH PRIVATE KEY-----\ngarbage\n-----END OPENSSH PRIVATE KEY-----\n');
    assert.throws(() => SshCredentials.load({ keyFile: notKey }), configInvalid(/not a private key/));
  });

  it('shows only which kinds are set when logged, inspected or serialised', () => {
    const c = SshCredentials.load({ password: 'pw-secret-42', keyFile: plainKey });
    for (const text of [inspect(c, { depth: 5, showHidden: true }), JSON.stringify(c), JSON.stringify({ c }), String(Object.keys(c))]) {
      assert.ok(!text.includes('pw-secret-42'), text);
      assert.ok(!text.includes('PRIVATE KEY'), text);
    }
    assert.equal(JSON.stringify(c), '{"kinds":["password","key"]}');
  });
});
