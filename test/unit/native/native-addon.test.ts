/**
 * The loader never throws: LOOKOUT_NATIVE=0, a missing file, a file that is not an addon and an
 * addon of another calling convention each give the TypeScript twins with the reason; the build npm
 * install made loads.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { NATIVE_ABI_VERSION, loadNativeAddon } from '../../../native/ts/index.js';
import { scratchDir } from '../../support/scratch-dir.js';

test('LOOKOUT_NATIVE=0 (or off, false, no) chooses the twins without looking for the addon', () => {
  for (const value of ['0', 'off', ' FALSE ', 'no']) {
    const { addon, status } = loadNativeAddon({ LOOKOUT_NATIVE: value });
    assert.equal(addon, null);
    assert.deepEqual(status, { implementation: 'typescript', reason: 'LOOKOUT_NATIVE=0 forces the TypeScript kernels', path: null, disabled: true });
  }
});

test('the build npm install made loads, with LOOKOUT_NATIVE unset or 1', () => {
  for (const env of [{}, { LOOKOUT_NATIVE: '1' }]) {
    const { addon, status } = loadNativeAddon(env);
    assert.ok(addon, status.reason ?? '');
    assert.equal(addon.abiVersion, NATIVE_ABI_VERSION);
    assert.deepEqual({ ...status, path: null }, { implementation: 'native', reason: null, path: null, disabled: false });
  }
});

test('a missing, broken or foreign addon gives the twins and says why, never throws', async () => {
  const { dir, cleanup } = await scratchDir('lookout-native-');
  try {
    const missing = join(dir, 'absent.node');
    let load = loadNativeAddon({ LOOKOUT_NATIVE_ADDON: missing });
    assert.equal(load.addon, null);
    assert.equal(load.status.path, missing);
    assert.match(load.status.reason ?? '', /is not built/);
    assert.equal(load.status.disabled, false);

    const broken = join(dir, 'broken.node');
    await writeFile(broken, 'not an ELF file');
    load = loadNativeAddon({ LOOKOUT_NATIVE_ADDON: broken });
    assert.equal(load.addon, null);
    assert.match(load.status.reason ?? '', new RegExp(`the native addon ${broken} does not load: .+`));

    // A module of another calling convention (a stale build): refused by its version, not called.
    const foreign = join(dir, 'foreign.cjs');
    await writeFile(foreign, 'module.exports = { abiVersion: 99 };');
    load = loadNativeAddon({ LOOKOUT_NATIVE_ADDON: foreign });
    assert.equal(load.addon, null);
    assert.match(load.status.reason ?? '', /speaks version 99, not 1; rebuild it/);
  } finally {
    await cleanup();
  }
});
