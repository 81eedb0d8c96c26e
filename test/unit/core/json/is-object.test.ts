import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isObject } from '../../../../core/src/index.js';

test('isObject: a JSON object, not null, an array or a primitive', () => {
  assert.equal(isObject({}), true);
  assert.equal(isObject(JSON.parse('{"a":1}')), true);
  assert.equal(isObject(Object.create(null)), true);
  for (const v of [null, undefined, [], [1], 'x', 1, true, 0n]) assert.equal(isObject(v), false, String(v));
});
