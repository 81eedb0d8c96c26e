/**
 * The plugins once more with LOOKOUT_NATIVE=0: the detector, tracker, depth and media tests (unit,
 * and a device running the onnx back-end) in a child Node whose frame kernels are the TypeScript
 * twins, so the path a device without the addon takes is tested as fully as the native one.
 * kernels-in-use.test.ts, run in both, checks which kernels each run really used.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../../../core/src/index.js';
import { childEnv } from './addon-under-test.js';

const FOLDERS = ['dist/test/unit/plugins/detector', 'dist/test/unit/plugins/tracker', 'dist/test/unit/plugins/depth', 'dist/test/unit/lib/media'];
const FILES = [
  'dist/test/integration/device/detector-onnx-device.test.js',
  'dist/test/unit/native/kernels-in-use.test.js',
  'dist/test/unit/native/snpe-binding.test.js',
];

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

test('the plugins pass their tests on the TypeScript twins (LOOKOUT_NATIVE=0)', async () => {
  const root = packageRoot();
  const files = [...FOLDERS.flatMap((d) => testFiles(join(root, d))), ...FILES.map((f) => join(root, f))];
  assert.ok(files.length > 20, `found ${files.length} test files`);
  const child = spawn(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...files], {
    cwd: root,
    env: childEnv({ LOOKOUT_NATIVE: '0', LOOKOUT_LOG_LEVEL: 'silent' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, output.slice(-6000));
  assert.match(output, /ℹ fail 0/);
});
