import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { packageRoot } from 'lookout/core';
import type { NativeAddon } from './native-kernels.js';

/** The calling convention this code speaks (native/src/binding/addon.cc's kAbiVersion). */
export const NATIVE_ABI_VERSION = 1;

/** Which implementation of the frame kernels this process runs. */
export type KernelImplementation = 'native' | 'typescript';

export interface NativeStatus {
  implementation: KernelImplementation;
  /** Why the TypeScript twins run (LOOKOUT_NATIVE=0, no build, a load error); null when the addon runs. */
  reason: string | null;
  /** The addon file loaded (or tried); null when none was looked for. */
  path: string | null;
  /** LOOKOUT_NATIVE=0 chose the twins: nothing failed, so nothing to warn about. */
  disabled: boolean;
}

export interface NativeLoad {
  addon: NativeAddon | null;
  status: NativeStatus;
}

const require = createRequire(import.meta.url);

/** The folder of binding.gyp: node-gyp-build looks in its prebuilds/<platform>-<arch>/, then its build/. */
export function nativeDir(): string {
  return join(packageRoot(), 'native');
}

function twins(reason: string, path: string | null, disabled = false): NativeLoad {
  return { addon: null, status: { implementation: 'typescript', reason, path, disabled } };
}

/**
 * Loads the addon for an environment: LOOKOUT_NATIVE=0 forces the twins; LOOKOUT_NATIVE_ADDON names
 * a file (the sanitizer build, a device's own); otherwise node-gyp-build's search of native/. Every
 * failure is returned as the twins with the reason, never thrown: the kernels have TypeScript
 * twins, so a missing or broken addon costs speed, not the device.
 */
export function loadNativeAddon(env: Record<string, string | undefined> = process.env): NativeLoad {
  const flag = (env.LOOKOUT_NATIVE ?? '').trim().toLowerCase();
  if (['0', 'off', 'false', 'no'].includes(flag)) return twins('LOOKOUT_NATIVE=0 forces the TypeScript kernels', null, true);
  let path: string | null = null;
  try {
    const named = env.LOOKOUT_NATIVE_ADDON;
    if (named) path = isAbsolute(named) ? named : resolve(packageRoot(), named);
    else path = (require('node-gyp-build') as { path(dir: string): string }).path(nativeDir());
  } catch (err) {
    return twins(`no native build was found (${firstLine(err)}); run npm install to build native/`, path);
  }
  if (!existsSync(path)) return twins(`the native addon ${path} is not built`, path);
  let addon: NativeAddon;
  try {
    addon = require(path) as NativeAddon;
  } catch (err) {
    return twins(`the native addon ${path} does not load: ${firstLine(err)}`, path);
  }
  if (addon.abiVersion !== NATIVE_ABI_VERSION) {
    return twins(`the native addon ${path} speaks version ${String(addon.abiVersion)}, not ${NATIVE_ABI_VERSION}; rebuild it (npm install)`, path);
  }
  return { addon, status: { implementation: 'native', reason: null, path, disabled: false } };
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0].trim();
}

let loaded: NativeLoad | undefined;

/** The process's addon, loaded once on first use (the environment is read then). */
export function nativeLoad(): NativeLoad {
  loaded ??= loadNativeAddon();
  return loaded;
}

/** The process's addon, or null where the twins run. */
export function nativeAddon(): NativeAddon | null {
  return nativeLoad().addon;
}

/** Which kernels run in this process and why, for status tools and start-up logs. */
export function nativeStatus(): NativeStatus {
  return { ...nativeLoad().status };
}
