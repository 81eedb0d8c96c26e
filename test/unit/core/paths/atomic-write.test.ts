import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeFileAtomic } from '../../../../core/src/paths/atomic-write.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../../support/small-filesystem.js';

describe('writeFileAtomic on a real filesystem that fills up', { skip: cannotMount() }, () => {
  let disk: SmallFilesystem | undefined;
  before(async () => {
    disk = await mountSmallFilesystem({ sizeKiB: 64, prefix: 'lookout-atomic-' });
  });
  after(async () => {
    await disk?.unmount();
  });

  it('writes with the mode asked for', async () => {
    const path = join(disk!.dir, 'conf', 'a.json');
    await writeFileAtomic(path, '{"v":1}\n', 0o600);
    assert.equal(await readFile(path, 'utf8'), '{"v":1}\n');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
  });

  it('on ENOSPC rejects with it, keeps the old content and leaves no temp file; writes once space is back', async () => {
    const path = join(disk!.dir, 'conf', 'a.json');
    disk!.fill();
    try {
      await assert.rejects(writeFileAtomic(path, `${'x'.repeat(16 * 1024)}\n`), { code: 'ENOSPC' });
      assert.equal(await readFile(path, 'utf8'), '{"v":1}\n', 'the old content is untouched');
      assert.deepEqual(await readdir(join(disk!.dir, 'conf')), ['a.json'], 'no temp file is left');
      // A new file fails the same way and leaves nothing, not even an empty file.
      await assert.rejects(writeFileAtomic(join(disk!.dir, 'conf', 'b.json'), 'new\n'), { code: 'ENOSPC' });
      assert.deepEqual(await readdir(join(disk!.dir, 'conf')), ['a.json']);
    } finally {
      disk!.free();
    }
    await writeFileAtomic(path, '{"v":2}\n');
    assert.equal(await readFile(path, 'utf8'), '{"v":2}\n');
    assert.deepEqual(await readdir(join(disk!.dir, 'conf')), ['a.json']);
  });
});
