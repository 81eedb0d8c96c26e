/**
 * The kernels under AddressSanitizer and UndefinedBehaviorSanitizer: the addon is built again with
 * -fsanitize=address,undefined into native/build-asan/ (native/scripts/build-sanitized.mjs; only
 * what changed is recompiled) and the kernel equality tests run against that build in a Node with the
 * sanitizer runtime preloaded. Any out-of-bounds access, use after free or undefined behaviour aborts
 * that run (-fno-sanitize-recover), which fails this test with the sanitizer's report.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../../../core/src/index.js';
import { childEnv } from './addon-under-test.js';

const KERNEL_TESTS = ['resample-kernels', 'decode-kernel', 'iou-kernel', 'annexb-kernel'];

test('the kernel equality tests pass against the sanitized build, with no sanitizer report', async () => {
  const root = packageRoot();
  const built = JSON.parse(execFileSync(process.execPath, [join(root, 'native/scripts/build-sanitized.mjs')], { cwd: root, encoding: 'utf8' })) as {
    addon: string;
    preload: string;
  };
  const files = KERNEL_TESTS.map((name) => join(root, 'dist/test/unit/native', `${name}.test.js`));
  const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...files], {
    cwd: root,
    env: childEnv({
      LD_PRELOAD: built.preload,
      // Node's own allocations live until exit by design: leak reports would be about V8, not us.
      ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0:exitcode=86',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
      LOOKOUT_NATIVE_ADDON: built.addon,
      LOOKOUT_EXPECT_SANITIZED: '1',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.doesNotMatch(output, /ERROR: AddressSanitizer|runtime error:/, output.slice(-4000));
  assert.equal(code, 0, output.slice(-4000));
  assert.match(output, /pass 2[0-9]/, 'the kernel tests ran');
});
