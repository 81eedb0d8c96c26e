import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_CAMERA_PROFILE } from '../../../../plugins/camera-profile/src/profile-schema.js';
import { readProfileFile, writeProfileFile } from '../../../../plugins/camera-profile/src/profile-store.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../../support/small-filesystem.js';

describe('the camera profile file on a full disk', { skip: cannotMount() }, () => {
  let disk: SmallFilesystem | undefined;
  before(async () => {
    disk = await mountSmallFilesystem({ sizeKiB: 64, prefix: 'lookout-profile-full-' });
  });
  after(async () => {
    await disk?.unmount();
  });

  it('refuses a save with tool_failed naming the file and ENOSPC, and keeps the saved profile as it was', async () => {
    const path = join(disk!.dir, 'config', 'camera_profile.json');
    const saved = await writeProfileFile(path, DEFAULT_CAMERA_PROFILE);
    disk!.fill();
    try {
      await assert.rejects(writeProfileFile(path, { ...DEFAULT_CAMERA_PROFILE, fps: 5 }), (err: Error & { code: string; details: unknown }) => {
        assert.equal(err.code, 'tool_failed');
        assert.match(err.message, /camera_profile\.json: ENOSPC.*the profile is unchanged/);
        assert.deepEqual(err.details, { path, errno: 'ENOSPC' });
        return true;
      });
      assert.deepEqual(await readProfileFile(path), saved);
      assert.deepEqual(await readdir(join(disk!.dir, 'config')), ['camera_profile.json']);
    } finally {
      disk!.free();
    }
    assert.equal((await writeProfileFile(path, { ...DEFAULT_CAMERA_PROFILE, fps: 5 })).profile.fps, 5);
    assert.match(await readFile(path, 'utf8'), /"fps": 5/);
  });
});
