import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { api } from '../../support/hub-helpers.js';
import { scratchDir } from '../../support/scratch-dir.js';
import { framesByImage, importAndWait, testBuilder, writeClip, writeText } from './builder-helpers.js';

const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;

test('dataset: COCO JSON is converted to normalised centre boxes, box by box; video_id groups clips', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  const root = join(dir, 'coco');
  await writeClip(join(root, 'images'), 'lobby', 2, { size: '80x60' });
  await writeClip(join(root, 'images'), 'dock', 1, { size: '80x60', ext: 'png' });
  const coco = {
    images: [
      { id: 1, file_name: 'lobby_001.jpg', width: 80, height: 60, video_id: 7 },
      { id: 2, file_name: 'lobby_002.jpg', width: 80, height: 60, video_id: 7 },
      // No size in the JSON: the image's own (read from the PNG) normalises its boxes.
      { id: 'x3', file_name: 'dock_001.png' },
    ],
    categories: [
      { id: 1, name: 'person' },
      { id: 5, name: 'knife' },
      { id: 9, name: 'forklift' },
    ],
    annotations: [
      { id: 1, image_id: 1, category_id: 1, bbox: [8, 6, 16, 30] },
      { id: 2, image_id: 1, category_id: 5, bbox: [70, 50, 20, 20] },
      { id: 3, image_id: 2, category_id: 9, bbox: [0, 0, 10, 10] },
      { id: 4, image_id: 'x3', category_id: 1, bbox: [40, 30, 40, 30] },
    ],
  };
  await writeText(join(root, 'instances_val.json'), JSON.stringify(coco));
  const builder = await testBuilder(dir);
  t.after(() => builder.close());
  await api(builder.url, '/api/ontology', { json: { classes: ['person'] } });

  const status = await importAndWait(builder.url, { name: 'coco', uri: join(root, 'instances_val.json'), format: 'coco' });
  assert.equal(status.state, 'READY', status.reason);
  assert.deepEqual(status.report.unknown_classes, { forklift: 1 });
  assert.equal(status.report.boxes_clamped, 1, 'the knife reaching past the corner');
  const frames = await framesByImage(builder.url, 'coco');
  const lobby1 = frames.get('images/lobby_001.jpg');
  assert.equal(lobby1.clip, 'video-7');
  assert.equal(frames.get('images/lobby_002.jpg').clip, 'video-7');
  assert.equal(lobby1.split, frames.get('images/lobby_002.jpg').split);
  const [person, knife] = lobby1.boxes;
  assert.equal(person.class, 'person');
  assert.equal(person.class_id, 4);
  assert.ok(close(person.cx, (8 + 8) / 80) && close(person.cy, (6 + 15) / 60) && close(person.w, 16 / 80) && close(person.h, 30 / 60), JSON.stringify(person));
  // x 70..90 of 80 and y 50..70 of 60: clamped to the corner.
  assert.equal(knife.class, 'knife');
  assert.equal(knife.class_id, 2);
  assert.ok(
    close(knife.cx, (70 / 80 + 1) / 2) && close(knife.w, 1 - 70 / 80) && close(knife.cy, (50 / 60 + 1) / 2) && close(knife.h, 1 - 50 / 60),
    JSON.stringify(knife),
  );
  assert.deepEqual(frames.get('images/lobby_002.jpg').boxes, []);
  const dock = frames.get('images/dock_001.png');
  assert.equal(dock.clip, 'dock');
  assert.deepEqual(
    dock.boxes.map((b: any) => [b.class, b.cx, b.cy, b.w, b.h]),
    [['person', 0.75, 0.75, 0.5, 0.5]],
  );

  await writeText(join(root, 'bad.json'), JSON.stringify({ images: [{ id: 1 }], annotations: [], categories: [] }));
  const bad = await importAndWait(builder.url, { name: 'bad', uri: join(root, 'bad.json'), format: 'coco' });
  assert.equal(bad.state, 'FAILED');
  assert.match(bad.reason, /^dataset\.format_invalid: .*images\.0\.file_name/);
});

test("dataset: a YOLOv8 export's data.yaml names the classes and its splits, which are kept unless asked to resplit", async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-builder-');
  t.after(cleanup);
  const root = join(dir, 'v8');
  await writeText(join(root, 'data.yaml'), 'path: .\ntrain: images/train\nval: images/val\ntest: images/test\nnc: 2\nnames:\n  0: person\n  1: knife\n');
  const expected = new Map<string, [string, number[]][]>();
  for (const [split, clips] of [
    ['train', ['a', 'b', 'c']],
    ['val', ['d']],
    ['test', ['e']],
  ] as const) {
    for (const clip of clips) {
      for (const file of await writeClip(join(root, 'images', split), clip, 2)) {
        const name = file.split('/').pop()!;
        const knife = clip === 'a' || clip === 'd' || clip === 'e';
        const lines = ['0 0.1 0.2 0.1 0.2', ...(knife ? ['1 0.6 0.6 0.2 0.2'] : [])];
        await writeText(join(root, 'labels', split, name.replace('.jpg', '.txt')), lines.join('\n'));
        expected.set(`images/${split}/${name}`, [
          ['person', [0.1, 0.2, 0.1, 0.2]],
          ...(knife ? ([['knife', [0.6, 0.6, 0.2, 0.2]]] as [string, number[]][]) : []),
        ]);
      }
    }
  }
  const builder = await testBuilder(dir);
  t.after(() => builder.close());
  await api(builder.url, '/api/ontology', { json: { classes: ['person'] } });

  const kept = await importAndWait(builder.url, { name: 'v8', uri: root, format: 'yolov8' });
  assert.equal(kept.state, 'READY', kept.reason);
  assert.equal(kept.format, 'yolov8');
  assert.deepEqual([kept.splits.train.frames, kept.splits.val.frames, kept.splits.test.frames], [6, 2, 2]);
  const frames = await framesByImage(builder.url, 'v8');
  assert.equal(frames.size, expected.size);
  for (const [image, boxes] of expected) {
    const f = frames.get(image);
    assert.equal(f.split, image.split('/')[1], `${image} keeps its export split`);
    assert.equal(f.source_split, image.split('/')[1]);
    assert.deepEqual(
      f.boxes.map((b: any) => [b.class, [b.cx, b.cy, b.w, b.h]]),
      boxes,
      image,
    );
    assert.equal(f.boxes[0].class_id, 4, 'YOLOv8 index 0 (person) is the ontology id 4');
  }

  const again = await importAndWait(builder.url, {
    name: 'v8-resplit',
    uri: `file://${root}`,
    format: 'yolov8',
    resplit: true,
    split: { train: 0.6, val: 0.2, test: 0.2, seed: 3 },
  });
  assert.equal(again.state, 'READY', again.reason);
  for (const s of ['train', 'val', 'test'] as const) assert.ok(again.splits[s].classes.knife > 0, `${s} holds knife (3 clips)`);
  const clipSplit = new Map<string, string>();
  for (const f of (await framesByImage(builder.url, 'v8-resplit')).values()) {
    assert.equal(clipSplit.get(f.clip) ?? f.split, f.split);
    clipSplit.set(f.clip, f.split);
  }

  await writeText(join(dir, 'v8bad', 'data.yaml'), 'train: ../../etc\nnames: [a]\n');
  const outside = await importAndWait(builder.url, { name: 'v8bad', uri: join(dir, 'v8bad'), format: 'yolov8' });
  assert.equal(outside.state, 'FAILED');
  assert.match(outside.reason, /outside the export/);
});
