import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatEnv, parseEnv } from '../../../../core/src/layers/env-file.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';

test('parses comments, export, quotes, inline comments, CRLF and a BOM', () => {
  const text = [
    '\uFEFF# a comment',
    '',
    'PLAIN=value',
    'export EXPORTED=yes',
    "SINGLE='it is # literal $HOME'",
    'DOUBLE="line\\nnext \\"quoted\\" \\\\ end" # trailing',
    'INLINE=10 # frames per second',
    'HASHED=a#b',
    'EMPTY=',
    'COMMENTED_OUT= # was 8',
    '  SPACED = padded  ',
    'DUP=1',
    'DUP=2\r',
  ].join('\n');
  assert.deepEqual(parseEnv(text, 'x.env'), {
    PLAIN: 'value',
    EXPORTED: 'yes',
    SINGLE: 'it is # literal $HOME',
    DOUBLE: 'line\nnext "quoted" \\ end',
    INLINE: '10',
    HASHED: 'a#b',
    EMPTY: '',
    COMMENTED_OUT: '',
    SPACED: 'padded',
    DUP: '2',
  });
});

test('bad lines are errors naming the file and the line', () => {
  const cases: [string, RegExp][] = [
    ['GOOD=1\nno equals sign', /x\.env:2: expected KEY=value/],
    ['1BAD=x', /x\.env:1: "1BAD" is not a valid variable name/],
    ['A="unterminated', /unterminated double quote/],
    ["A='unterminated", /unterminated single quote/],
    ['A="x" junk', /unexpected text after the closing quote/],
    ['=value', /expected KEY=value/],
  ];
  for (const [text, pattern] of cases) {
    assert.throws(
      () => parseEnv(text, 'x.env'),
      (err: unknown) => err instanceof LookoutError && err.code === 'env_file_invalid' && pattern.test(err.message),
    );
  }
});

test('a malformed line is never echoed whole: a secret in it stays out of the message', () => {
  assert.throws(
    () => parseEnv('DEVICE_PASSWORD hunter2', 'x.env'),
    (err: unknown) => {
      assert.ok(err instanceof LookoutError);
      assert.match(err.message, /x\.env:1: expected KEY=value \(the line starts with DEVICE_PASSWORD\)/);
      assert.ok(!err.message.includes('hunter2'));
      return true;
    },
  );
});

test('formatEnv writes what parseEnv reads back', () => {
  const env = { A: 'plain', B: 'with space', C: 'quote " and \\ slash', D: 'multi\nline', E: '' };
  assert.deepEqual(parseEnv(formatEnv(env, 'header line')), env);
});
