/**
 * The builder's dataset stage: the import rate of a YOLO tree (images and boxes per second, through
 * the HTTP API until READY: read, check, hash, map, clamp, write, split) beside a plain read of the
 * same files in the same run (the floor any import must spend), and the split time for 100 000
 * frames in 5 000 clips with a common, a rare and a too-rare class.
 *
 *   node dist/test/bench/builder.bench.js          (npm run bench -- builder)
 *   LOOKOUT_BENCH_CLIPS=100 node dist/test/bench/builder.bench.js   (100 frames a clip)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '../../core/src/log/logger.js';
import { startBuilder } from '../../builder/src/start-builder.js';
import { sequenceSplit } from '../../builder/plugins/dataset/src/sequence-split.js';
import { scratchDir } from '../support/scratch-dir.js';

const CLIPS = Number(process.env.LOOKOUT_BENCH_CLIPS ?? 40);
const PER_CLIP = 100;

const { dir, cleanup } = await scratchDir('lookout-builder-bench-');
try {
  const tree = join(dir, 'tree');
  mkdirSync(join(tree, 'labels'), { recursive: true });
  mkdirSync(join(tree, 'images'), { recursive: true });
  writeFileSync(join(tree, 'classes.txt'), 'handgun\nrifle\nknife\nbackpack\n');
  for (let c = 0; c < CLIPS; c++) {
    const source = `cellauto=size=320x240:rate=10:rule=30:seed=${c + 1}`;
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', source, '-frames:v', String(PER_CLIP), join(tree, 'images', `clip${c}_%04d.jpg`)]);
  }
  const images = readdirSync(join(tree, 'images'));
  for (const [i, f] of images.entries()) {
    const lines = Array.from({ length: 1 + (i % 4) }, (_, k) => `${k} 0.${2 + k} 0.5 0.1 0.2`);
    writeFileSync(join(tree, 'labels', f.replace('.jpg', '.txt')), lines.join('\n'));
  }

  let started = process.hrtime.bigint();
  for (const f of images) {
    readFileSync(join(tree, 'images', f));
    readFileSync(join(tree, 'labels', f.replace('.jpg', '.txt')));
  }
  const plainS = Number(process.hrtime.bigint() - started) / 1e9;

  const builder = await startBuilder({ port: 0, dataDir: dir, logger: createLogger({ level: 'silent' }), env: { LOOKOUT_BUILDER_DATASET_ROOTS: dir } });
  started = process.hrtime.bigint();
  await fetch(`${builder.url}/api/datasets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', uri: tree, format: 'yolo' }),
  });
  let status: { state: string; report: { frames_imported: number; boxes_imported: number } };
  do {
    await new Promise((r) => setTimeout(r, 20));
    status = (await (await fetch(`${builder.url}/api/datasets/bench`)).json()) as typeof status;
  } while (status.state === 'IMPORTING');
  const importS = Number(process.hrtime.bigint() - started) / 1e9;
  await builder.close();
  const { frames_imported: frames, boxes_imported: boxes } = status.report;
  console.log(`dataset: ${frames} JPEG frames 320x240, ${boxes} boxes, ${CLIPS} clips (${status.state})`);
  console.log(`  plain read of the files  ${(images.length / plainS).toFixed(0).padStart(7)} frames/s  (${plainS.toFixed(3)} s)`);
  console.log(
    `  import through the API   ${(frames / importS).toFixed(0).padStart(7)} frames/s  ${(boxes / importS).toFixed(0)} boxes/s  (${importS.toFixed(3)} s, ${((plainS / importS) * 100).toFixed(1)} % of the plain read)`,
  );

  const clips = Array.from({ length: 5000 }, (_, i) => ({
    clip: `c${i}`,
    frames: 20,
    classes: new Set([0, ...(i % 7 === 0 ? [1] : []), ...(i % 500 === 0 ? [2] : []), ...(i < 2 ? [3] : [])]),
  }));
  started = process.hrtime.bigint();
  sequenceSplit(clips, { ratios: { train: 0.8, val: 0.1, test: 0.1 }, seed: 1 });
  console.log(`split: 100000 frames in 5000 clips  ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(1)} ms`);
} finally {
  await cleanup();
}
