import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { healthReport } from '../../../../plugins/system-health/src/health-report.js';
import { measureStorage } from '../../../../plugins/system-health/src/storage-usage.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../../support/small-filesystem.js';

const inputs = (recordingsDir: string) => ({
  deviceId: 'cam-s',
  serial: 'S1',
  role: 'cam',
  fingerprintPresent: true,
  recordingsDir,
  thresholds: { warnPct: 80, criticalPct: 95 },
  plugins: [],
});

describe('storage of a real volume that fills up', { skip: cannotMount() }, () => {
  const disks: SmallFilesystem[] = [];
  after(async () => {
    for (const d of disks) await d.unmount();
  });

  it('is CRITICAL at 100 % used when the volume is full, and OK once space is back', async () => {
    const disk = await mountSmallFilesystem({ sizeKiB: 128, prefix: 'lookout-storage-full-' });
    disks.push(disk);
    const rec = join(disk.dir, 'data', 'recordings');
    disk.fill();
    assert.equal((await measureStorage(rec)).used_pct, 100);
    const full = await healthReport(inputs(rec));
    assert.deepEqual([full.storage_health, full.status, full.storage_error], ['CRITICAL', 'critical', undefined]);
    disk.free();
    assert.equal((await healthReport(inputs(rec))).storage_health, 'OK');
  });

  it('measures the volume when even the recordings folder cannot be made (no inode left)', async () => {
    const disk = await mountSmallFilesystem({ sizeKiB: 128, inodes: 8, prefix: 'lookout-storage-inodes-' });
    disks.push(disk);
    await mkdir(join(disk.dir, 'data'));
    disk.fill();
    // Use up the inodes: then no folder can be made, as on a full ext4 volume.
    for (let i = 0; ; i++) {
      try {
        await writeFile(join(disk.dir, `empty-${i}`), '');
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
        break;
      }
    }
    const rec = join(disk.dir, 'data', 'recordings');
    const usage = await measureStorage(rec);
    assert.equal(existsSync(rec), false);
    assert.deepEqual([usage.path, usage.used_pct, usage.file_count, usage.folder_bytes], [rec, 100, 0, 0]);
    const report = await healthReport(inputs(rec));
    assert.deepEqual([report.storage_health, report.storage_error], ['CRITICAL', undefined], 'the real figures, not "cannot measure"');
  });
});
