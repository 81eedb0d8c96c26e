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
});
