/**
 * The manual prune's one builder (pruneStore): the same report and the same manifest rule wherever the
 * folder is. Here on the local disk, and through a ChunkStore that records what it was asked, as the
 * operator's SFTP store is (test/integration/ssh runs that one against a real sshd).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { localChunkStore, pruneStore, type ChunkStore } from '../../../../plugins/recorder/src/service.js';
import { writeManifest } from '../../../../plugins/recorder/src/manifest-file.js';
import { readSidecar } from '../../../../plugins/recorder/src/sidecar.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';
import { writeChunks } from './chunk-fixtures.js';

describe('pruneStore: the manual prune wherever the folder is', () => {
  let scratch: ScratchDir;
  let dir: string;
  let names: string[];
  before(async () => {
    scratch = await scratchDir('lookout-store-prune-');
    dir = join(scratch.dir, 'recordings');
    mkdirSync(dir, { recursive: true });
    names = await writeChunks(dir, 6, { justified: (i) => i === 0 });
    const sidecars = await Promise.all(names.map((n) => readSidecar(dir, n)));
    await writeManifest(
      dir,
      sidecars.filter((s) => s !== undefined),
      10,
    );
    // A line of a chunk removed earlier by hand, and one that is not a line of ours: both go at the next prune.
    writeFileSync(join(dir, 'recent_manifest.jsonl'), `{"name":"gone.h265"}\nnot json\n${readFileSync(join(dir, 'recent_manifest.jsonl'), 'utf8')}`);
  });
  after(() => scratch.cleanup());

  it('a dry run reports and changes nothing, manifest included', async () => {
    const before = readdirSync(dir).sort();
    const report = await pruneStore(localChunkStore, dir, { keep: 2, dryRun: true });
    assert.deepEqual(readdirSync(dir).sort(), before);
    assert.deepEqual([report.total_chunks, report.kept_chunks, report.manifest_lines_dropped], [6, 2, 0]);
    assert.deepEqual(
      report.removed.map((r) => r.name),
      [...names.slice(1, 5)],
    );
  });

  it('keeps exactly `keep`, the justified chunk last, and the manifest keeps only the lines of chunks still there', async () => {
    const report = await pruneStore(localChunkStore, dir, { keep: 2, dryRun: false });
    assert.deepEqual(
      readdirSync(dir)
        .filter((n) => n.endsWith('.h265'))
        .sort(),
      [names[0], names[5]],
    );
    assert.equal(report.manifest_lines_dropped, 6); // gone.h265, "not json" and the four removed chunks
    const manifest = readFileSync(join(dir, 'recent_manifest.jsonl'), 'utf8').trim().split('\n');
    assert.deepEqual(
      manifest.map((l) => (JSON.parse(l) as { name: string }).name),
      [names[0], names[5]],
    );
  });

  it('works through any ChunkStore: the listing, sidecars, removals and the manifest go through it', async () => {
    const calls: string[] = [];
    const sidecar = (name: string, justified: boolean) =>
      JSON.stringify({ ...JSON.parse(readFileSync(join(dir, names[0].replace('.h265', '.json')), 'utf8')), name, justified });
    const store: ChunkStore = {
      list: (d) =>
        Promise.resolve(
          d === '/r'
            ? [
                { name: names[1], size: 10 },
                { name: names[2], size: 20 },
                { name: 'notes.txt', size: 1 },
              ]
            : [],
        ),
      readText: (p) =>
        Promise.resolve(
          p === posix.join('/r', names[1].replace('.h265', '.json')) ? sidecar(names[1], true) : p === '/r/recent_manifest.jsonl' ? '' : undefined,
        ),
      remove: (p) => Promise.resolve(void calls.push(`rm ${p}`)),
      writeFileAtomic: (p) => Promise.resolve(void calls.push(`write ${p}`)),
    };
    const report = await pruneStore(store, '/r', { keep: 1, dryRun: false });
    assert.deepEqual(report.removed, [{ name: names[2], justified: false, size_bytes: 20 }]);
    assert.deepEqual(calls, [`rm /r/${names[2].replace('.h265', '.dets.jsonl')}`, `rm /r/${names[2]}`, `rm /r/${names[2].replace('.h265', '.json')}`]);
  });
});
