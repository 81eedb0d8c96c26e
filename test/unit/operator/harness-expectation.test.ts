import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatMismatches, mismatches } from '../../../operator/src/harness/expectation.js';

describe('harness expectations', () => {
  it('objects match on the keys named, arrays whole, "/re/" as a regular expression', () => {
    const answer = { layer: 'layer2', plugins: [{ name: 'camera', state: 'ok' }], runtime_version: '0.1.0', extra: 1 };
    assert.deepEqual(mismatches({ layer: 'layer2', plugins: [{ state: 'ok' }], runtime_version: '/^0\\./' }, answer), []);
    assert.deepEqual(mismatches({ plugins: [] }, answer), [{ path: '$.plugins', expected: [], actual: answer.plugins }]);
    assert.deepEqual(mismatches({ plugins: [{ state: 'failed' }], missing: 3 }, answer), [
      { path: '$.plugins[0].state', expected: 'failed', actual: 'ok' },
      { path: '$.missing', expected: 3, actual: undefined },
    ]);
    assert.match(formatMismatches(mismatches({ missing: 3 }, answer)), /\$\.missing\n {4}- expected 3\n {4}\+ actual {3}\(absent\)/);
  });
});
