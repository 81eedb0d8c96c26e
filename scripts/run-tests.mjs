// Runs every compiled test file with node's test runner, several files at once (each in its own
// process), and ends with the runner's pass/fail summary. `npm test -- hub` runs only files whose
// path contains "hub". `npm run pretest` (run by `npm test`) installs and builds first.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { availableParallelism } from 'node:os';

const root = new URL('..', import.meta.url).pathname;
const testRoot = join(root, 'dist', 'test');

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return ['bench', 'soak', 'support', 'fixtures'].includes(name) ? [] : find(full);
    return name.endsWith('.test.js') ? [full] : [];
  });
}

const filters = process.argv.slice(2);
const files = find(testRoot)
  .filter((f) => filters.length === 0 || filters.some((s) => relative(root, f).includes(s)))
  .sort();
if (files.length === 0) {
  console.error(`no test files found under ${testRoot}${filters.length ? ` matching ${filters.join(', ')}` : ''}`);
  process.exit(1);
}

// Tests mostly wait on sockets and child processes, so a few more files than cores keep both busy.
const concurrency = Number(process.env.LOOKOUT_TEST_CONCURRENCY ?? Math.max(2, availableParallelism() + 1));
// A hang bound, not a speed check: each test file gets 6 minutes (ESLint's type-checked pass over the
// whole tree took over 3 on a loaded 2-core machine).
const args = ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=360000', '--test-reporter=spec', ...files];
console.log(`running ${files.length} test files, ${concurrency} at a time`);
const child = spawn(process.execPath, args, {
  stdio: 'inherit',
  cwd: root,
  env: { ...process.env, LOOKOUT_LOG_LEVEL: process.env.LOOKOUT_LOG_LEVEL ?? 'silent' },
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
