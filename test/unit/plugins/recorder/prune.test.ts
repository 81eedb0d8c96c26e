/**
 * The prune of spec 02 (KEEP_CHUNKS, DRY_RUN=1) on real chunk files, through the module the recorder
 * uses and through `lookout prune-recordings`: a dry run changes nothing, a real one keeps exactly
 * KEEP_CHUNKS, unjustified chunks go before justified ones, oldest first.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../../core/src/paths/package-root.js';
import { chunkFilesInRemovalOrder, pruneInventory, pruneRecordings, removalOrder } from '../../../../plugins/recorder/src/prune.js';
import { writeManifest } from '../../../../plugins/recorder/src/manifest-file.js';
import { readSidecar } from '../../../../plugins/recorder/src/sidecar.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';
import { writeChunks } from './chunk-fixtures.js';

const run = promisify(execFile);

/** Every file of the folder with its size and mtime: what "changes nothing" is checked against. */
function snapshot(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((n) => {
      const s = statSync(join(dir, n));
      return `${n} ${s.size} ${s.mtimeMs}`;
    });
}

describe('prune order', () => {
  it('takes the oldest unjustified chunks first and justified ones last', () => {
    const chunks = ['a', 'b', 'c', 'd', 'e'].map((name, i) => ({ name, justified: i % 2 === 0 }));
    assert.deepEqual(
      removalOrder(chunks).map((c) => c.name),
      ['b', 'd', 'a', 'c', 'e'],
    );
  });

  it('reports the same way wherever the folder is: one report over an inventory, removals through the caller (the SFTP prune uses it too)', async () => {
    const inventory = ['a', 'b', 'c', 'd'].map((name, i) => ({ name, justified: i === 0, size_bytes: 100 * (i + 1) }));
    const removed: string[] = [];
    const report = await pruneInventory('/x', inventory, { keep: 2, dryRun: false }, async (name) => {
      removed.push(name);
    });
    assert.deepEqual(removed, ['b', 'c']);
    assert.deepEqual(report, {
      dir: '/x',
      keep: 2,
      dry_run: false,
      total_chunks: 4,
      kept_chunks: 2,
      removed: [inventory[1], inventory[2]],
      freed_bytes: 500,
    });
    const dry = await pruneInventory('/x', inventory, { keep: 1, dryRun: true }, () => Promise.reject(new Error('a dry run removes nothing')));
    assert.deepEqual([dry.kept_chunks, dry.freed_bytes, dry.removed.map((e) => e.name)], [1, 900, ['b', 'c', 'd']]);
    assert.deepEqual(chunkFilesInRemovalOrder('c.h265'), ['c.dets.jsonl', 'c.h265', 'c.json'], 'the sidecar goes last: a listed chunk always has one');
  });
});

describe('pruneRecordings on real chunks', () => {
  let scratch: ScratchDir;
  let dir: string;
  let names: string[];
  const justified = (i: number) => i % 5 === 0; // 8 of 40
  before(async () => {
    scratch = await scratchDir('lookout-prune-');
    dir = join(scratch.dir, 'data', 'recordings');
    mkdirSync(dir, { recursive: true });
    names = await writeChunks(dir, 40, { justified });
  });
  after(() => scratch.cleanup());

  it('reports what would go and changes nothing when dry', async () => {
    const before = snapshot(dir);
    const report = await pruneRecordings(dir, { keep: 30, dryRun: true });
    assert.deepEqual(snapshot(dir), before);
    assert.deepEqual([report.total_chunks, report.kept_chunks, report.removed.length, report.dry_run], [40, 30, 10, true]);
  });

  it('keeps exactly KEEP_CHUNKS, removing unjustified ones oldest first', async () => {
    const report = await pruneRecordings(dir, { keep: 30, dryRun: false });
    const left = readdirSync(dir).filter((n) => n.endsWith('.h265'));
    assert.equal(left.length, 30);
    const unjustified = names.filter((_, i) => !justified(i));
    assert.deepEqual(
      report.removed.map((r) => r.name),
      unjustified.slice(0, 10),
    );
    for (const r of report.removed) {
      for (const ext of ['.h265', '.json', '.dets.jsonl']) assert.ok(!readdirSync(dir).includes(r.name.replace('.h265', ext)));
    }
    assert.equal(
      report.freed_bytes,
      report.removed.reduce((n, r) => n + r.size_bytes, 0),
    );
  });

  it('removes justified chunks only once no unjustified one is left', async () => {
    const report = await pruneRecordings(dir, { keep: 5, dryRun: false });
    const left = readdirSync(dir).filter((n) => n.endsWith('.h265'));
    assert.equal(left.length, 5);
    const leftSidecars = await Promise.all(left.map((n) => readSidecar(dir, n)));
    assert.ok(
      leftSidecars.every((s) => s?.justified),
      'the five kept are justified',
    );
    assert.deepEqual(left.sort(), names.filter((_, i) => justified(i)).slice(-5), 'the newest justified ones');
    assert.equal(report.removed.filter((r) => r.justified).length, 3);
  });
});

describe('lookout prune-recordings', () => {
  let scratch: ScratchDir;
  let dir: string;
  const cli = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [join(packageRoot(), 'bin', 'lookout.js'), 'prune-recordings', ...args], { env: { ...process.env, ...env } });
  before(async () => {
    scratch = await scratchDir('lookout-prune-cli-');
    dir = join(scratch.dir, 'data', 'recordings');
    mkdirSync(dir, { recursive: true });
    await writeChunks(dir, 12, { justified: (i) => i === 0 });
    const sidecars = await Promise.all(
      readdirSync(dir)
        .filter((n) => n.endsWith('.h265'))
        .sort()
        .map((n) => readSidecar(dir, n)),
    );
    await writeManifest(
      dir,
      sidecars.map((s) => s!),
      50,
    );
  });
  after(() => scratch.cleanup());

  it('with --dry-run (or DRY_RUN=1) reports and changes nothing', async () => {
    const before = snapshot(dir);
    const { stdout } = await cli(['--data-dir', scratch.dir, '--keep', '4', '--dry-run', '--json']);
    const report = JSON.parse(stdout);
    assert.deepEqual([report.dry_run, report.total_chunks, report.kept_chunks, report.removed.length], [true, 12, 4, 8]);
    const text = await cli(['--data-dir', scratch.dir], { KEEP_CHUNKS: '4', DRY_RUN: '1' });
    assert.match(text.stdout, /would remove 8 of 12 chunks .*keeping 4 \(dry run: nothing changed\)/);
    assert.deepEqual(snapshot(dir), before);
  });

  it('keeps exactly --keep chunks, the justified one among them, and drops their manifest lines', async () => {
    const { stdout } = await cli(['--data-dir', scratch.dir, '--keep', '4', '--json']);
    const report = JSON.parse(stdout);
    assert.deepEqual([report.kept_chunks, report.removed.length, report.manifest_lines_dropped], [4, 8, 8]);
    const left = readdirSync(dir).filter((n) => n.endsWith('.h265'));
    assert.equal(left.length, 4);
    assert.ok(
      (await Promise.all(left.map((n) => readSidecar(dir, n)))).some((s) => s?.justified),
      'the old justified chunk stays',
    );
    const manifest = readFileSync(join(dir, 'recent_manifest.jsonl'), 'utf8').trim().split('\n');
    assert.deepEqual(manifest.map((l) => JSON.parse(l).name).sort(), left.sort());
  });

  it('refuses a bad --keep as a usage error', async () => {
    await assert.rejects(cli(['--data-dir', scratch.dir, '--keep', '0']), (err: any) => err.code === 2 && /--keep/.test(err.stderr));
  });
});
