import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sequenceSplit, type ClipSummary } from '../../../../../builder/plugins/dataset/src/sequence-split.js';
import { seededRandom } from '../../../../../lib/random/seeded-random.js';

const RATIOS = { train: 0.8, val: 0.1, test: 0.1 };

/** 400 clips of 5-60 frames; class 0 in every clip, class 1 in a third, class 2 in 3 clips, class 3 in 2, class 4 in 1. */
function clips(seed: number): ClipSummary[] {
  const r = seededRandom(seed);
  return Array.from({ length: 400 }, (_, i) => {
    const classes = new Set([0]);
    if (i % 3 === 0) classes.add(1);
    if (i === 17 || i === 211 || i === 398) classes.add(2);
    if (i === 5 || i === 6) classes.add(3);
    if (i === 99) classes.add(4);
    return { clip: `clip-${i}`, frames: 5 + Math.floor(r.next() * 56), classes };
  });
}

test('split: every clip goes to one split, frames near 80/10/10, each class with 3+ clips in every split, rarer ones reported', () => {
  for (const seed of [1, 2, 3, 42]) {
    const input = clips(seed);
    const { assignment, tooFewClips } = sequenceSplit(input, { ratios: RATIOS, seed });
    assert.equal(assignment.size, input.length, 'every clip is assigned once');
    const frames = { train: 0, val: 0, test: 0 };
    const holds = { train: new Set<number>(), val: new Set<number>(), test: new Set<number>() };
    for (const c of input) {
      const s = assignment.get(c.clip)!;
      frames[s] += c.frames;
      for (const k of c.classes) holds[s].add(k);
    }
    const total = frames.train + frames.val + frames.test;
    assert.ok(Math.abs(frames.train / total - 0.8) < 0.03, `train ${frames.train / total}`);
    assert.ok(Math.abs(frames.val / total - 0.1) < 0.03, `val ${frames.val / total}`);
    assert.ok(Math.abs(frames.test / total - 0.1) < 0.03, `test ${frames.test / total}`);
    for (const s of ['train', 'val', 'test'] as const) for (const k of [0, 1, 2]) assert.ok(holds[s].has(k), `seed ${seed}: ${s} holds class ${k}`);
    assert.deepEqual(tooFewClips, [3, 4]);
  }
});

test('split: the same clips and seed give the same split whatever their order; another seed another one', () => {
  const input = clips(7);
  const a = sequenceSplit(input, { ratios: RATIOS, seed: 11 }).assignment;
  const b = sequenceSplit([...input].reverse(), { ratios: RATIOS, seed: 11 }).assignment;
  assert.deepEqual([...a].sort(), [...b].sort());
  const c = sequenceSplit(input, { ratios: RATIOS, seed: 12 }).assignment;
  assert.notDeepEqual([...a].sort(), [...c].sort());
});

test('split: a split with no share gets no clip, and one clip goes whole to train', () => {
  const { assignment } = sequenceSplit(clips(1), { ratios: { train: 0.9, val: 0.1, test: 0 }, seed: 1 });
  assert.ok(![...assignment.values()].includes('test'));
  const one = sequenceSplit([{ clip: 'only', frames: 100, classes: new Set([0]) }], { ratios: RATIOS, seed: 1 });
  assert.deepEqual([...one.assignment], [['only', 'train']]);
  assert.deepEqual(one.tooFewClips, [0]);
});
