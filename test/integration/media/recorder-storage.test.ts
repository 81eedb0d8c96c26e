/**
 * Storage health of the recordings filesystem and the prune at CRITICAL, on a real small tmpfs: a
 * volume filled past STORAGE_CRITICAL_PCT is pruned by the recorder itself (unjustified chunks
 * first, oldest first, the newest kept) until it is back to WARNING, which get_recording_status and
 * the status file then say.
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readFileSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RecordingStatusResultSchema } from '../../../core/src/contracts/index.js';
import { readSidecar } from '../../../plugins/recorder/src/sidecar.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../support/small-filesystem.js';
import { writeChunks } from '../../unit/plugins/recorder/chunk-fixtures.js';
import { startRecorder, waitUntil, type RecorderRig } from '../../unit/plugins/recorder/recorder-harness.js';

const usedPct = (dir: string) => {
  const s = statfsSync(dir);
  const used = s.blocks - s.bfree;
  return (used / (used + s.bavail)) * 100;
};

describe('recorder: storage CRITICAL prunes back to WARNING', { skip: cannotMount() }, () => {
  let disk: SmallFilesystem | undefined;
  let rig: RecorderRig | undefined;
  let names: string[] = [];
  const justified = (i: number) => i < 2; // the two oldest carry a person

  before(async () => {
    disk = await mountSmallFilesystem({ sizeKiB: 2048, prefix: 'lookout-rec-storage-' });
    names = await writeChunks(disk.dir, 10, { justified, padTo: 120 * 1024 });
    // A filler up to about 94 % used: CRITICAL at 90, WARNING from 50.
    const fd = openSync(join(disk.dir, 'other-data.bin'), 'w');
    try {
      while (usedPct(disk.dir) < 94) writeSync(fd, Buffer.alloc(16 * 1024));
    } finally {
      closeSync(fd);
    }
    assert.ok(usedPct(disk.dir) >= 90, `filled to ${usedPct(disk.dir)} %`);
    rig = await startRecorder({
      env: { RECORDINGS_DIR: disk.dir, STORAGE_WARN_PCT: '50', STORAGE_CRITICAL_PCT: '90', KEEP_CHUNKS: '30', STORAGE_CHECK_MS: '300' },
    });
  });
  after(async () => {
    await rig?.stop().catch(() => undefined);
    await disk?.unmount();
  });

  it('prunes unjustified chunks, oldest first, until the volume is back to WARNING', async () => {
    const status = await waitUntil('storage WARNING', async () => {
      const s = RecordingStatusResultSchema.parse(await rig!.call('get_recording_status'));
      return s.storage_health === 'WARNING' ? s : undefined;
    });
    assert.ok(status.storage_used_pct < 90 && status.storage_used_pct >= 50, `${status.storage_used_pct} %`);
    assert.match(status.recommendation, /^storage WARNING/);
    const left = new Set(readdirSync(disk!.dir).filter((n) => n.endsWith('.h265')));
    const removed = names.filter((n) => !left.has(n));
    assert.ok(removed.length >= 1 && removed.length < 8, `removed ${removed.length}`);
    // The oldest unjustified ones went; the justified ones (older still) stayed.
    assert.deepEqual(removed, names.filter((_, i) => !justified(i)).slice(0, removed.length));
    for (const n of names.filter((_, i) => justified(i))) assert.ok(left.has(n) && (await readSidecar(disk!.dir, n))?.justified);
    const manifest = readFileSync(join(disk!.dir, 'recent_manifest.jsonl'), 'utf8');
    for (const n of removed) assert.ok(!manifest.includes(n), `${n} left the manifest`);
  });

  it('on a full disk without AUTO_PRUNE: CRITICAL, writes fail with ENOSPC in the advice, nothing crashes; recording resumes with room', async () => {
    await rig!.stop();
    rig = undefined;
    disk!.fill();
    rig = await startRecorder({
      env: { RECORDINGS_DIR: disk!.dir, STORAGE_WARN_PCT: '50', STORAGE_CRITICAL_PCT: '90', AUTO_PRUNE: '0', STORAGE_CHECK_MS: '300' },
    });
    const status = await waitUntil('CRITICAL and stalled on ENOSPC', async () => {
      const s = RecordingStatusResultSchema.parse(await rig!.call('get_recording_status'));
      return s.storage_health === 'CRITICAL' && s.recommendation.includes('chunk writes fail') ? s : undefined;
    });
    assert.equal(status.is_writing_data, false);
    assert.match(status.recommendation, /^recording stalled since .*: chunk writes fail \(ENOSPC/);
    assert.match(status.recommendation, /storage CRITICAL: prune or replace the disk \([\d.]+% used/);
    // A failed chunk leaves nothing behind. The status file is rewritten while the disk is full, and each
    // try has its temp file between its open and the ENOSPC that removes it: a loaded machine's listing
    // caught one, so what must hold is that none is left.
    await waitUntil('no partial chunk or temp file left', async () =>
      readdirSync(disk!.dir).filter((n) => n.endsWith('.part') || n.endsWith('.tmp')).length === 0 ? true : undefined,
    );
    assert.equal(rig.runtime.plugins.find((p) => p.name === 'recorder')?.state, 'degraded');

    disk!.free();
    const resumed = await waitUntil('recording again', async () => {
      const s = RecordingStatusResultSchema.parse(await rig!.call('get_recording_status'));
      return s.is_writing_data && s.storage_health !== 'CRITICAL' ? s : undefined;
    });
    assert.equal(resumed.recommendation.includes('stalled'), false, resumed.recommendation);
    const file = await waitUntil('the status file again', () => {
      const f = JSON.parse(readFileSync(join(disk!.dir, '.h265_status'), 'utf8'));
      return f.is_writing && f.storage?.health !== 'CRITICAL' ? f : undefined;
    });
    assert.match(file.last_error.message, /ENOSPC/);
  });

  it('when something else fills the disk: prunes only unjustified chunks, keeps the evidence and says what fills it', async () => {
    await rig!.stop();
    rig = undefined;
    for (const n of readdirSync(disk!.dir)) rmSync(join(disk!.dir, n), { force: true, recursive: true });
    const evidence = await writeChunks(disk!.dir, 6, { justified: (i) => i < 2 });
    const fd = openSync(join(disk!.dir, 'other-data.bin'), 'w');
    try {
      while (usedPct(disk!.dir) < 97) writeSync(fd, Buffer.alloc(16 * 1024));
    } finally {
      closeSync(fd);
    }
    rig = await startRecorder({
      env: { RECORDINGS_DIR: disk!.dir, STORAGE_WARN_PCT: '50', STORAGE_CRITICAL_PCT: '90', KEEP_CHUNKS: '30', STORAGE_CHECK_MS: '300' },
    });
    const status = await waitUntil('the prune gave up on CRITICAL', async () => {
      const s = RecordingStatusResultSchema.parse(await rig!.call('get_recording_status'));
      return s.recommendation.includes('after pruning') ? s : undefined;
    });
    assert.equal(status.storage_health, 'CRITICAL');
    assert.match(status.recommendation, /storage CRITICAL after pruning to \d+ chunks: the recordings are not what fills the disk \([\d.]+% used/);
    const left = new Set(readdirSync(disk!.dir).filter((n) => n.endsWith('.h265')));
    for (const n of evidence.slice(0, 2)) assert.ok(left.has(n), `justified ${n} stays`);
    // The newest two stay at every prune: 4 and 5 were the newest before the recorder's own first chunk.
    for (const n of evidence.slice(2, 4)) assert.ok(!left.has(n), `unjustified ${n} went`);
    const file = await waitUntil('the status file says so', () => {
      const f = JSON.parse(readFileSync(join(disk!.dir, '.h265_status'), 'utf8'));
      return typeof f.pruned_to_chunks_still_critical === 'number' ? f : undefined;
    });
    assert.ok(file.pruned_to_chunks_still_critical >= 2);
  });
});
