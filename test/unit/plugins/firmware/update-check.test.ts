import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkForUpdate, compareVersions } from '../../../../plugins/firmware/src/update-check.js';

describe('firmware update check', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-fw-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('orders versions by semver precedence', () => {
    assert.equal(compareVersions('1.2.3', '1.2.3'), 0);
    assert.equal(compareVersions('1.10.0', '1.9.9'), 1);
    assert.equal(compareVersions('0.1.0', '1.0.0'), -1);
    assert.equal(compareVersions('1.0.0-rc.1', '1.0.0'), -1);
    assert.equal(compareVersions('1.0.0', '1.0.0-rc.1'), 1);
    assert.equal(compareVersions('1.0.0+build.5', '1.0.0'), 0);
    // Semver 11.4: numeric identifiers compare as numbers, and sort before alphanumeric ones.
    assert.equal(compareVersions('1.0.0-rc.10', '1.0.0-rc.2'), 1);
    assert.equal(compareVersions('1.0.0-alpha.1', '1.0.0-alpha.beta'), -1);
    assert.equal(compareVersions('1.0.0-alpha', '1.0.0-alpha.1'), -1);
    assert.equal(compareVersions('1.0.0-beta.11', '1.0.0-beta.11'), 0);
  });

  it('offers a newer version, not an older or equal one, and nothing without a manifest', async () => {
    const path = join(dir, 'firmware_update.json');
    assert.equal((await checkForUpdate('1.0.0', path)).update_available, false);
    await writeFile(path, JSON.stringify({ version: '1.1.0', url: 'https://example.invalid/u.tgz' }));
    const newer = await checkForUpdate('1.0.0', path);
    assert.deepEqual([newer.update_available, newer.available_version, newer.url], [true, '1.1.0', 'https://example.invalid/u.tgz']);
    const same = await checkForUpdate('1.1.0', path);
    assert.equal(same.update_available, false);
    assert.match(same.reason!, /not newer/);
  });

  it('refuses a broken manifest naming the file', async () => {
    const path = join(dir, 'bad.json');
    await writeFile(path, JSON.stringify({ version: 'latest' }));
    await assert.rejects(
      checkForUpdate('1.0.0', path),
      (err: Error & { code: string }) => err.code === 'config_invalid' && /bad\.json is invalid/.test(err.message),
    );
  });
});
