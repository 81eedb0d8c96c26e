import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppendedBatches } from '../../../../hub/src/state/appended-batches.js';

describe('stream entries applied already (by writer and batch number)', () => {
  it('knows a batch the second time, each writer on its own', () => {
    const seen = new AppendedBatches();
    assert.equal(seen.firstTime('a', 1), true);
    assert.equal(seen.firstTime('b', 1), true);
    assert.equal(seen.firstTime('a', 1), false);
    assert.equal(seen.firstTime('a', 2), true);
    assert.equal(seen.firstTime('b', 1), false);
  });

  it("keeps a writer's last 4 096 batches however much the others write", () => {
    const seen = new AppendedBatches();
    for (let n = 1; n <= 5000; n++) seen.firstTime('quiet', n);
    for (let n = 1; n <= 20_000; n++) seen.firstTime('busy', n);
    assert.equal(seen.firstTime('quiet', 5000), false);
    assert.equal(seen.firstTime('quiet', 905), false);
    // Past the window: the oldest were forgotten.
    assert.equal(seen.firstTime('quiet', 1), true);
  });

  it('forgets the writer heard from least recently once 64 are known', () => {
    const seen = new AppendedBatches();
    for (let w = 0; w < 64; w++) seen.firstTime(`w${w}`, 1);
    seen.firstTime('w0', 2); // w0 heard again: w1 is now the oldest
    seen.firstTime('w64', 1);
    assert.equal(seen.firstTime('w0', 1), false);
    assert.equal(seen.firstTime('w1', 1), true);
  });

  it('is saved as runs per writer and read back with the same verdicts, the least recently heard still first to go', () => {
    const seen = new AppendedBatches();
    for (let n = 1; n <= 5000; n++) seen.firstTime('a', n);
    seen.firstTime('b', 7);
    seen.firstTime('b', 9);
    const saved = JSON.parse(JSON.stringify(seen)) as Record<string, [number, number][]>;
    assert.deepEqual(saved, {
      a: [[905, 5000]],
      b: [
        [7, 7],
        [9, 9],
      ],
    });
    const back = AppendedBatches.from(saved);
    for (const [origin, n, first] of [
      ['a', 905, false],
      ['a', 5000, false],
      ['a', 904, true],
      ['b', 9, false],
      ['b', 8, true],
    ] as const) {
      assert.equal(back.firstTime(origin, n), first, `${origin} ${n}`);
    }
    // 64 writers and one more: a, read back first, is the one forgotten, not b.
    const order = AppendedBatches.from(saved);
    for (let w = 0; w < 63; w++) order.firstTime(`w${w}`, 1);
    assert.equal(order.firstTime('b', 9), false);
    assert.equal(order.firstTime('a', 5000), true);
  });

  it('reads what is not a saved window as none, and a run past the window as its newest 4 096', () => {
    for (const bad of [null, 'x', [1, 2], { a: 'x' }, { a: [[3, 1]] }, { a: [['1', 2]] }]) {
      assert.equal(AppendedBatches.from(bad).firstTime('a', 1), true, JSON.stringify(bad));
    }
    const huge = AppendedBatches.from({ a: [[1, Number.MAX_SAFE_INTEGER]] });
    assert.equal(huge.firstTime('a', Number.MAX_SAFE_INTEGER), false);
    assert.equal(huge.firstTime('a', Number.MAX_SAFE_INTEGER - 4095), false);
    assert.equal(huge.firstTime('a', Number.MAX_SAFE_INTEGER - 4096), true);
  });
});
