import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AutomationEntry } from '../../../core/src/index.js';
import { createLogger } from '../../../core/src/log/logger.js';
import { automationHook } from '../../../edge/src/automation-hook.js';

const entry = (n: number): AutomationEntry => ({ action: 'prune', plugin: 'recorder', trigger: 'requested', outcome: 'ok', message: `prune ${n}` });

test('entries reported before the owner listens reach it, the newest 16; later ones go straight to every listener', () => {
  const hook = automationHook(createLogger({ level: 'silent' }));
  for (let i = 0; i < 20; i++) hook.report(entry(i));
  const first: string[] = [];
  const off = hook.listen((e) => first.push(e.message));
  assert.deepEqual(
    first,
    Array.from({ length: 16 }, (_, i) => `prune ${i + 4}`),
  );
  const second: string[] = [];
  hook.listen((e, at) => {
    assert.ok(at instanceof Date);
    second.push(e.message);
  });
  hook.report(entry(20));
  assert.deepEqual([first.at(-1), second], ['prune 20', ['prune 20']]);
  off();
  hook.report(entry(21));
  assert.equal(first.at(-1), 'prune 20');
  assert.deepEqual(second, ['prune 20', 'prune 21']);
});

test('a listener that throws does not keep the entry from the others', () => {
  const hook = automationHook(createLogger({ level: 'silent' }));
  const seen: string[] = [];
  hook.listen(() => {
    throw new Error('broken owner');
  });
  hook.listen((e) => seen.push(e.message));
  hook.report(entry(1));
  assert.deepEqual(seen, ['prune 1']);
});
