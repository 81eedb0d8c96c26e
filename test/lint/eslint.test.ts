/**
 * ESLint on the whole tree (typescript-eslint's type-checked rules, the boundary rule, the size rule),
 * in a file of its own: on a loaded 2-core machine it takes two minutes of the file's three.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { repoCli } from '../support/repo-cli.js';

test('ESLint (typescript-eslint type-checked rules and the boundary rule) passes on the whole tree', { timeout: 300_000 }, async () => {
  const { code, output } = await repoCli('eslint', ['.', '--max-warnings', '0']);
  assert.equal(code, 0, output);
});
