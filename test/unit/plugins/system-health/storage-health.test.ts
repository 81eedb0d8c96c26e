import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { healthReport, overallStatus } from '../../../../plugins/system-health/src/health-report.js';
import { storageHealth } from '../../../../plugins/system-health/src/storage-health.js';
import { measureStorage } from '../../../../plugins/system-health/src/storage-usage.js';

describe('storage health', () => {
  const t = { warnPct: 80, criticalPct: 95 };
  it('classifies used_pct against the thresholds, inclusive', () => {
    assert.equal(storageHealth(0, t), 'OK');
    assert.equal(storageHealth(79.99, t), 'OK');
    assert.equal(storageHealth(80, t), 'WARNING');
    assert.equal(storageHealth(94.9, t), 'WARNING');
    assert.equal(storageHealth(95, t), 'CRITICAL');
    assert.equal(storageHealth(100, t), 'CRITICAL');
  });
  it('derives the overall status from storage and plugin states', () => {
    const ok = [{ name: 'a', version: '1.0.0', state: 'ok' as const }];
    assert.equal(overallStatus('OK', ok), 'ok');
    assert.equal(overallStatus('WARNING', ok), 'degraded');
    assert.equal(overallStatus('OK', [...ok, { name: 'b', version: '1.0.0', state: 'degraded' as const }]), 'degraded');
    assert.equal(overallStatus('OK', [...ok, { name: 'b', version: '1.0.0', state: 'failed' as const }]), 'critical');
    assert.equal(overallStatus('CRITICAL', ok), 'critical');
  });
});

describe('measured storage of the recordings folder', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-storage-'));
    await mkdir(join(dir, 'rec', '2026-01-01'), { recursive: true });
    await writeFile(join(dir, 'rec', '2026-01-01', 'chunk-0001.h265'), Buffer.alloc(1000));
    await writeFile(join(dir, 'rec', '2026-01-01', 'chunk-0001.json'), Buffer.alloc(24));
    await writeFile(join(dir, 'rec', 'chunk-0002.h265'), Buffer.alloc(2000));
    await writeFile(join(dir, 'rec', '.h265_status'), '{}');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('sums the folder and takes the volume figures from statfs', async () => {
    const usage = await measureStorage(join(dir, 'rec'));
    assert.deepEqual([usage.file_count, usage.chunk_count, usage.folder_bytes, usage.truncated], [4, 2, 3026, false]);
    const fs = await statfs(join(dir, 'rec'));
    const expectPct = ((fs.blocks - fs.bfree) / (fs.blocks - fs.bfree + fs.bavail)) * 100;
    assert.ok(Math.abs(usage.used_pct - expectPct) < 1, `${usage.used_pct} ≈ ${expectPct}`);
    assert.ok(Math.abs(usage.free_gb - (fs.bavail * fs.bsize) / 1024 ** 3) < 0.1);
    assert.ok(usage.total_gb >= usage.free_gb);
  });

  it('creates a missing recordings folder and stops walking at the entry limit', async () => {
    const fresh = await measureStorage(join(dir, 'new', 'recordings'));
    assert.deepEqual([fresh.file_count, fresh.folder_bytes], [0, 0]);
    const limited = await measureStorage(join(dir, 'rec'), { maxEntries: 2 });
    assert.equal(limited.truncated, true);
  });

  it('reports WARNING and CRITICAL from the real usage with thresholds around it', async () => {
    const used = (await measureStorage(join(dir, 'rec'))).used_pct;
    const base = { deviceId: 'cam-s', serial: 'S1', role: 'cam', fingerprintPresent: true, recordingsDir: join(dir, 'rec'), plugins: [] };
    const warn = await healthReport({ ...base, thresholds: { warnPct: Math.max(0, used - 1), criticalPct: 100 } });
    assert.deepEqual([warn.storage_health, warn.status], ['WARNING', 'degraded']);
    const crit = await healthReport({ ...base, thresholds: { warnPct: 0, criticalPct: Math.max(0, used - 1) } });
    assert.deepEqual([crit.storage_health, crit.status], ['CRITICAL', 'critical']);
    assert.ok(used < 99, 'the test volume has room');
    const ok = await healthReport({ ...base, thresholds: { warnPct: used + 1, criticalPct: 100 } });
    assert.deepEqual([ok.storage_health, ok.status], ['OK', 'ok']);
  });

  it('reports CRITICAL with the reason when the folder cannot be measured', async () => {
    await writeFile(join(dir, 'a-file'), 'x');
    const r = await healthReport({
      deviceId: 'cam-s',
      serial: 'S1',
      role: 'cam',
      fingerprintPresent: false,
      recordingsDir: join(dir, 'a-file', 'rec'),
      thresholds: { warnPct: 80, criticalPct: 95 },
      plugins: [],
    });
    assert.equal(r.storage_health, 'CRITICAL');
    assert.equal(r.storage_error!.code, 'storage_unmeasurable');
    assert.match(r.storage_error!.message, /cannot measure .*a-file\/rec: (ENOTDIR|EEXIST)/);
  });
});
