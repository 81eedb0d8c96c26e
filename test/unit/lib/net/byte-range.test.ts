import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRange } from '../../../../lib/net/byte-range.js';

describe('parseRange', () => {
  it('reads a single range, an open end and a suffix', () => {
    assert.deepEqual(parseRange('bytes=0-99', 1000), { start: 0, end: 99 });
    assert.deepEqual(parseRange('bytes=900-', 1000), { start: 900, end: 999 });
    assert.deepEqual(parseRange('bytes=-100', 1000), { start: 900, end: 999 });
    assert.deepEqual(parseRange('bytes=-5000', 1000), { start: 0, end: 999 });
    assert.deepEqual(parseRange('bytes=990-5000', 1000), { start: 990, end: 999 });
  });
  it('says unsatisfiable for a range outside the file', () => {
    assert.equal(parseRange('bytes=1000-', 1000), 'unsatisfiable');
    assert.equal(parseRange('bytes=5000-6000', 1000), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0', 1000), 'unsatisfiable');
    assert.equal(parseRange('bytes=99999999999999999999-', 1000), 'unsatisfiable');
  });
  it('ignores what it does not serve (the whole file is answered)', () => {
    assert.equal(parseRange(undefined, 1000), undefined);
    assert.equal(parseRange('bytes=0-1,5-9', 1000), undefined);
    assert.equal(parseRange('items=0-1', 1000), undefined);
    assert.equal(parseRange('bytes=9-1', 1000), undefined);
    assert.equal(parseRange('bytes=-', 1000), undefined);
  });
});
