// Builds the addon with AddressSanitizer and UndefinedBehaviorSanitizer into native/build-asan/ (a
// separate folder: the ordinary build stays as it is), for the test that runs the kernel equality
// tests against it. Compiled straight with the C++ compiler (node-gyp has one build folder); only
// what changed since the last sanitized build is compiled again. Prints the addon's path and the
// runtime to preload (Node itself is not instrumented, so libasan must come first).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { checkToolchain, nativeDir, nodeHeadersDir, ToolchainError } from './toolchain.mjs';

const out = join(nativeDir, 'build-asan');
const addon = join(out, 'lookout_native.node');
const cxx = process.env.CXX || 'g++';
const flags = [
  '-std=c++17',
  '-O1',
  '-g',
  '-fPIC',
  '-fno-omit-frame-pointer',
  '-ffp-contract=off',
  '-fexceptions',
  '-fsanitize=address,undefined',
  '-fno-sanitize-recover=all',
  '-DNAPI_VERSION=8',
  '-DNAPI_CPP_EXCEPTIONS',
  '-DNODE_ADDON_API_DISABLE_DEPRECATED',
  '-DLOOKOUT_SANITIZED',
];

function sources() {
  return ['kernels', 'binding'].flatMap((dir) =>
    readdirSync(join(nativeDir, 'src', dir))
      .filter((f) => f.endsWith('.cc'))
      .map((f) => join(nativeDir, 'src', dir, f)),
  );
}

function newest(files) {
  return Math.max(...files.map((f) => statSync(f).mtimeMs));
}

try {
  checkToolchain();
  const include = [join(nodeHeadersDir(), 'include', 'node'), createRequire(import.meta.url)('node-addon-api').include_dir.replace(/^"|"$/g, '')];
  const includeFlags = include.map((d) => `-I${d.startsWith('/') ? d : join(process.cwd(), d)}`);
  mkdirSync(out, { recursive: true });
  const headers = ['kernels', 'binding'].flatMap((dir) =>
    readdirSync(join(nativeDir, 'src', dir))
      .filter((f) => f.endsWith('.h'))
      .map((f) => join(nativeDir, 'src', dir, f)),
  );
  const headersChanged = newest([...headers, new URL(import.meta.url).pathname]);
  const objects = sources().map((src) => {
    const obj = join(out, `${basename(src, '.cc')}.${src.includes('/binding/') ? 'binding' : 'kernel'}.o`);
    if (!existsSync(obj) || statSync(obj).mtimeMs < Math.max(statSync(src).mtimeMs, headersChanged)) {
      execFileSync(cxx, [...flags, ...includeFlags, '-c', src, '-o', obj], { stdio: 'inherit' });
    }
    return obj;
  });
  if (!existsSync(addon) || statSync(addon).mtimeMs < newest(objects)) {
    execFileSync(cxx, ['-shared', '-fsanitize=address,undefined', ...objects, '-o', addon], { stdio: 'inherit' });
  }
  const runtime = execFileSync(cxx, ['-print-file-name=libasan.so']).toString().trim();
  console.log(JSON.stringify({ addon, preload: runtime }));
} catch (err) {
  console.error(err instanceof ToolchainError ? err.message : err);
  process.exit(1);
}
