// `npm install` runs this (the package's install script): builds native/ from source with node-gyp
// against Node's own headers. A prebuilt addon for this platform in native/prebuilds/ that loads is
// used as it is (node-gyp-build's convention: a device image ships one), unless --from-source.
// LOOKOUT_NATIVE=0 skips the addon altogether.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addonFile, loadProblem, nativeDir, runNodeGyp, ToolchainError } from './toolchain.mjs';

const fromSource = process.argv.includes('--from-source') || process.env.npm_config_build_from_source === 'true';

function skipped() {
  return ['0', 'off', 'false', 'no'].includes((process.env.LOOKOUT_NATIVE ?? '').trim().toLowerCase());
}

function prebuiltHere() {
  const dir = join(nativeDir, 'prebuilds', `${process.platform}-${process.arch}`);
  if (!existsSync(dir)) return null;
  const file = readdirSync(dir).find((f) => f.endsWith('.node'));
  return file ? join(dir, file) : null;
}

/** The newest change to what the build reads (sources, binding.gyp). */
function newestSource() {
  let newest = statSync(join(nativeDir, 'binding.gyp')).mtimeMs;
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const s = statSync(path);
      if (s.isDirectory()) walk(path);
      else newest = Math.max(newest, s.mtimeMs);
    }
  };
  walk(join(nativeDir, 'src'));
  return newest;
}

function main() {
  if (skipped()) {
    console.log('native: LOOKOUT_NATIVE=0, not building the addon (the TypeScript kernels run)');
    return;
  }
  const prebuilt = prebuiltHere();
  if (prebuilt && !fromSource) {
    const problem = loadProblem(prebuilt);
    if (!problem) {
      console.log(`native: using the prebuilt ${prebuilt}`);
      return;
    }
    console.log(`native: the prebuilt ${prebuilt} does not load (${problem}); building from source`);
  }
  // A build dir configured the same way (binding.gyp older than its Makefile, the same vendor SDK and
  // Node) only needs make's incremental build.
  const makefile = join(nativeDir, 'build', 'Makefile');
  const stamp = join(nativeDir, 'build', 'lookout-configuration');
  const configuration = JSON.stringify({
    sdk: process.env.SNPE_ROOT || process.env.QNN_SDK_ROOT || null,
    lib: process.env.SNPE_LIB_DIR || null,
    node: process.version,
  });
  const configured =
    existsSync(makefile) &&
    statSync(makefile).mtimeMs > statSync(join(nativeDir, 'binding.gyp')).mtimeMs &&
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8') === configuration;
  const upToDate = configured && existsSync(addonFile) && statSync(addonFile).mtimeMs >= newestSource();
  if (!upToDate) {
    runNodeGyp(configured ? ['build'] : ['rebuild']);
    writeFileSync(stamp, configuration);
  }
  const problem = loadProblem(addonFile);
  if (problem) throw new ToolchainError(`native: the addon built but does not load: ${problem}`);
  console.log(`native: ${upToDate ? 'up to date' : 'built'} ${addonFile}`);
}

try {
  main();
} catch (err) {
  console.error(err instanceof ToolchainError ? err.message : err);
  process.exit(1);
}
