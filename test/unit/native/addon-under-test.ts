/**
 * The native addon the kernel tests hold to the TypeScript twins: the build npm install made (or the
 * file LOOKOUT_NATIVE_ADDON names: the sanitizer test's build), whatever LOOKOUT_NATIVE says. Not
 * finding it fails the tests: a fresh clone's npm test builds it.
 */
import assert from 'node:assert/strict';
import { loadNativeAddon, type NativeAddon } from '../../../native/ts/index.js';

export function addonUnderTest(): NativeAddon {
  const { addon, status } = loadNativeAddon({ LOOKOUT_NATIVE_ADDON: process.env.LOOKOUT_NATIVE_ADDON });
  assert.ok(addon, `the native addon did not load (${status.reason}); npm install builds it (npm run native:build)`);
  // The sanitizer test runs these files against its own build and says so.
  assert.equal(addon.sanitized, process.env.LOOKOUT_EXPECT_SANITIZED === '1', `addon ${status.path} sanitized: ${addon.sanitized}`);
  return addon;
}

/** The environment for a tool the tests run (ffmpeg): without the sanitizer runtime preloaded into this process. */
export function toolEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.LD_PRELOAD;
  return env;
}

/** Largest absolute difference of two equally long arrays (NaN where one holds NaN and the other not). */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length, 'lengths differ');
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(a[i]) !== Number.isNaN(b[i])) return NaN;
    if (!Number.isNaN(a[i])) m = Math.max(m, Math.abs(a[i] - b[i]));
  }
  return m;
}

/** Uniform random bytes from a seed (every value, no structure). */
export function randomBytes(length: number, next: () => number): Uint8Array {
  return Uint8Array.from({ length }, () => Math.floor(next() * 256));
}

/**
 * The environment for a child `node --test` run: this one's, less the marker by which node:test
 * tells a child it is a test file itself (it would then skip the files it is given), plus `extra`.
 */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_TEST_CONTEXT;
  return env;
}
