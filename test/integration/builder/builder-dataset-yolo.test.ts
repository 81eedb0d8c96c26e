import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { api } from '../../support/hub-helpers.js';
import { scratchDir } from '../../support/scratch-dir.js';
import { framesByImage, importAndWait, testBuilder, writeClip, writeText } from './builder-helpers.js';

const NAMES = ['handgun', 'rifle', 'knife', 'backpack', 'person', 'car'];
const ONTOLOGY = ['handgun', 'rifle', 'knife', 'backpack', 'person'];
type Box = { cls: string; cx: number; cy: number; w: number; h: number };

/**
 * A YOLO tree of 12 flat clips of 4 JPEG frames and one folder clip of 3 PNGs. Person is in every
 * frame; handgun in 3 clips (rare, enough for every split), rifle in 2 (too few); clip c05 carries a
 * box to clamp, one wholly outside, two unknown classes and a malformed line; c06's last frame has no
 * label; an empty, a truncated and a duplicate image, and a label without image.
 */
async function yoloTree(root: string): Promise<Map<string, Box[]>> {
  const expected = new Map<string, Box[]>();
  await writeText(join(root, 'classes.txt'), `${NAMES.join('\n')}\n`);
  for (let c = 0; c < 12; c++) {
    const clip = `c${String(c).padStart(2, '0')}`;
    const files = await writeClip(join(root, 'images'), clip, 4);
    for (const [i, file] of files.entries()) {
      const image = `images/${file.split('/').pop()}`;
      const lines = ['4 0.5 0.5 0.2 0.4'];
      const boxes: Box[] = [{ cls: 'person', cx: 0.5, cy: 0.5, w: 0.2, h: 0.4 }];
      if (c <= 2) {
        lines.push('0 0.3 0.3 0.1 0.1');
        boxes.push({ cls: 'handgun', cx: 0.3, cy: 0.3, w: 0.1, h: 0.1 });
      }
      if (c === 3 || c === 4) {
        lines.push('1 0.7 0.7 0.1 0.1');
        boxes.push({ cls: 'rifle', cx: 0.7, cy: 0.7, w: 0.1, h: 0.1 });
      }
      if (c === 5 && i === 0) {
        lines.push('3 0.95 0.5 0.2 0.2', '3 1.5 0.5 0.2 0.2', '5 0.5 0.5 0.1 0.1', '9 0.5 0.5 0.1 0.1', '0 0.5 abc');
        // Clamped to the right edge: x from 0.85 to 1.
        boxes.push({ cls: 'backpack', cx: 0.925, cy: 0.5, w: 0.15, h: 0.2 });
      }
      if (c === 6 && i === 3) {
        expected.set(image, []);
        continue;
      }
      await writeText(join(root, 'labels', image.replace(/^images\//, '').replace(/\.jpg$/, '.txt')), `${lines.join('\n')}\n`);
      expected.set(image, boxes);
    }
  }
  for (const file of await writeClip(join(root, 'images'), 'seq-x', 3, { ext: 'png', folder: true })) {
    const rel = file.slice(join(root, 'images').length + 1);
    await writeText(join(root, 'labels', rel.replace(/\.png$/, '.txt')), '4 0.25 0.25 0.5 0.5\n');
    expected.set(`images/${rel}`, [{ cls: 'person', cx: 0.25, cy: 0.25, w: 0.5, h: 0.5 }]);
  }
  await writeFile(join(root, 'images', 'empty_001.jpg'), Buffer.alloc(0));
  const whole = await readFile(join(root, 'images', 'c07_001.jpg'));
  await writeFile(join(root, 'images', 'broken_001.jpg'), whole.subarray(0, Math.floor(whole.length / 2)));
  await copyFile(join(root, 'images', 'c00_001.jpg'), join(root, 'images', 'dup_001.jpg'));
  await writeText(join(root, 'labels', 'dup_001.txt'), '4 0.5 0.5 0.2 0.4\n');
  await writeText(join(root, 'labels', 'ghost_001.txt'), '4 0.5 0.5 0.2 0.4\n');
  return expected;
}

function assertBoxes(actual: any[], expected: Box[], where: string): void {
  assert.equal(actual.length, expected.length, `${where}: box count`);
  expected.forEach((e, i) => {
    const a = actual[i];
    assert.equal(a.class, e.cls, `${where} box ${i}: class`);
    assert.equal(a.class_id, ONTOLOGY.indexOf(e.cls), `${where} box ${i}: class id of the ontology`);
    for (const k of ['cx', 'cy', 'w', 'h'] as const) assert.ok(Math.abs(a[k] - e[k]) < 1e-9, `${where} box ${i}: ${k} ${a[k]} != ${e[k]}`);
  });
}

test('dataset: a YOLO tree imports box by box, with its validation report and a sequence-aware split; it survives a restart', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  const root = join(dir, 'yolo');
  const expected = await yoloTree(root);
  let builder = await testBuilder(dir);
  t.after(() => builder.close());
  await api(builder.url, '/api/ontology', { json: { classes: ['person'] } });

  const status = await importAndWait(builder.url, { name: 'gate', uri: root, format: 'yolo' });
  assert.equal(status.state, 'READY', status.reason);
  assert.deepEqual(status.classes, ONTOLOGY);
  const r = status.report;
  assert.equal(r.frames_seen, 12 * 4 + 3 + 3);
  assert.equal(r.frames_imported, 12 * 4 + 3);
  assert.deepEqual(r.unknown_classes, { car: 1, '#9': 1 });
  assert.equal(r.boxes_clamped, 1);
  assert.equal(r.boxes_degenerate, 1);
  assert.equal(r.label_lines_malformed, 1);
  assert.equal(r.frames_unlabelled, 1);
  assert.deepEqual(r.empty_images.examples, ['images/empty_001.jpg']);
  assert.equal(r.corrupt_images.count, 1);
  assert.equal(r.corrupt_images.examples[0].image, 'images/broken_001.jpg');
  assert.match(r.corrupt_images.examples[0].why, /truncated|end-of-image/);
  assert.deepEqual(r.duplicate_frames.examples, [{ image: 'images/dup_001.jpg', duplicate_of: 'images/c00_001.jpg' }]);
  assert.deepEqual(r.orphan_labels.examples, ['labels/ghost_001.txt']);
  assert.deepEqual(r.classes_in_too_few_clips, ['rifle', 'backpack'], 'rifle is in 2 clips, backpack in 1');
  assert.equal(status.progress.done, status.progress.total);

  const frames = await framesByImage(builder.url, 'gate');
  assert.equal(frames.size, expected.size);
  for (const [image, boxes] of expected) {
    const f = frames.get(image);
    assert.ok(f, `${image} imported`);
    assertBoxes(f.boxes, boxes, image);
    assert.equal(f.width, 64);
    assert.equal(f.height, 48);
  }
  assert.equal(frames.get('images/seq-x/001.png').clip, 'seq-x');
  assert.equal(frames.get('images/c03_002.jpg').clip, 'c03');

  // No clip crosses splits; every split has frames, and handgun (3 clips) is in each of them.
  const splitOf = new Map<string, string>();
  for (const f of frames.values()) {
    assert.ok(f.split, `${f.image} has a split`);
    assert.equal(splitOf.get(f.clip) ?? f.split, f.split, `clip ${f.clip} stays in one split`);
    splitOf.set(f.clip, f.split);
  }
  for (const s of ['train', 'val', 'test'] as const) {
    assert.ok(status.splits[s].frames > 0, `${s} has frames`);
    assert.ok(status.splits[s].classes.handgun > 0, `${s} holds handgun`);
    assert.ok(status.splits[s].classes.person > 0, `${s} holds person`);
  }
  assert.ok(status.splits.train.frames > status.splits.val.frames + status.splits.test.frames, 'train is the large split');
  assert.deepEqual(status.class_counts.handgun, { boxes: 12, frames: 12, clips: 3 });
  assert.equal(status.class_counts.person.clips, 13);

  await builder.close();
  builder = await testBuilder(dir);
  const again = await api(builder.url, '/api/datasets/gate');
  assert.deepEqual(again.body, status);
  const listed = await api(builder.url, '/api/datasets');
  assert.deepEqual(
    listed.body.datasets.map((d: any) => d.name),
    ['gate'],
  );
});

test('dataset: thermal pairs stay paired, a frame without its twin is left out and counted', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  const root = join(dir, 'pairs');
  await writeText(join(root, 'classes.txt'), 'person\n');
  const rgb = await writeClip(join(root, 'images'), 'walk', 3);
  await writeClip(join(root, 'thermal'), 'walk', 2, { ext: 'png', size: '32x24' });
  for (const f of rgb) await writeText(join(root, 'labels', f.split('/').pop()!.replace('.jpg', '.txt')), '0 0.5 0.5 0.5 0.5\n');
  const builder = await testBuilder(dir);
  t.after(() => builder.close());
  await api(builder.url, '/api/ontology/import', { json: { map: 'production', ontology: 'prod' } });

  const status = await importAndWait(builder.url, { name: 'pairs', uri: `file://${root}`, format: 'yolo', ontology: 'prod', thermal: true });
  assert.equal(status.state, 'READY', status.reason);
  assert.equal(status.thermal, true);
  assert.deepEqual(status.report.thermal_unpaired, { count: 1, examples: ['images/walk_003.jpg'] });
  const frames = await framesByImage(builder.url, 'pairs');
  assert.deepEqual(
    [...frames.values()].map((f) => [f.image, f.thermal, f.boxes[0].class_id]),
    [
      ['images/walk_001.jpg', 'thermal/walk_001.png', 0],
      ['images/walk_002.jpg', 'thermal/walk_002.png', 0],
    ],
  );
});

test('dataset: URIs the builder cannot read answer typed errors at once; a builder stopped mid-import marks it FAILED with why', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  let builder = await testBuilder(dir, { env: { LOOKOUT_BUILDER_IMPORT_BATCH: '1' } });
  t.after(() => builder.close());

  const gs = await api(builder.url, '/api/datasets', { json: { name: 'g', uri: 'gs://lookout-data/weapons/v3', format: 'yolov8' } });
  assert.equal(gs.status, 503);
  assert.equal(gs.body.error.code, 'dataset.storage_unreachable');
  assert.match(gs.body.error.message, /Google Cloud Storage \(gs:\/\/lookout-data\) is not reachable/);
  const s3 = await api(builder.url, '/api/datasets', { json: { name: 's', uri: 's3://lookout-data/x', format: 'coco' } });
  assert.equal(s3.status, 503);
  assert.equal(s3.body.error.details.scheme, 's3');
  assert.equal(
    (await api(builder.url, '/api/datasets', { json: { name: 's', uri: 's3://Bad_Bucket', format: 'coco' } })).body.error.code,
    'dataset.uri_unsupported',
  );
  assert.equal((await api(builder.url, '/api/datasets', { json: { name: 'h', uri: 'http://example.com/x', format: 'coco' } })).status, 400);
  const outside = await api(builder.url, '/api/datasets', { json: { name: 'o', uri: '/etc', format: 'yolo' } });
  assert.equal(outside.status, 403);
  assert.equal(outside.body.error.code, 'dataset.path_outside_root');
  const missing = await api(builder.url, '/api/datasets', { json: { name: 'm', uri: join(dir, 'nothing'), format: 'yolo' } });
  assert.equal(missing.body.error.code, 'dataset.path_not_found');
  const badSplit = await api(builder.url, '/api/datasets', { json: { name: 'b', uri: dir, format: 'yolo', split: { train: 0.5, val: 0.1, test: 0.1 } } });
  assert.equal(badSplit.status, 400);
  assert.equal((await api(builder.url, '/api/datasets/none')).body.error.code, 'dataset.dataset_unknown');
  const notYolo = await importAndWait(builder.url, { name: 'empty-tree', uri: dir, format: 'yolo' });
  assert.equal(notYolo.state, 'FAILED');
  assert.match(notYolo.reason, /^dataset\.format_invalid: .*class names/);

  const root = join(dir, 'long');
  await writeText(join(root, 'classes.txt'), 'person\n');
  await writeClip(join(root, 'images'), 'long', 800, { size: '16x16' });
  const started = await api(builder.url, '/api/datasets', { json: { name: 'long', uri: root, format: 'yolo', class_names: ['person'] } });
  assert.equal(started.status, 202);
  assert.equal(started.body.state, 'IMPORTING');
  await builder.close();
  builder = await testBuilder(dir);
  const cut = await api(builder.url, '/api/datasets/long');
  assert.equal(cut.body.state, 'FAILED');
  assert.match(cut.body.reason, /stopped during the import|restarted during the import/);
  assert.equal(cut.body.splits.train.frames, 0, 'no half-imported frames are left');
  assert.equal((await api(builder.url, '/api/datasets/long', { method: 'DELETE' })).status, 204);
  assert.equal((await api(builder.url, '/api/datasets/long')).status, 404);
});
