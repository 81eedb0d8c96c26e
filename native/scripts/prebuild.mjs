// `npm run native:prebuild [-- --arch=arm64]`: builds the addon from source and puts it where
// node-gyp-build looks first on a device, native/prebuilds/<platform>-<arch>/lookout_native.napi.node
// (Node-API: one file serves every Node version). For the QCS8550 (aarch64) from an x86 machine, name
// a cross compiler: CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ npm run native:prebuild -- --arch=arm64
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { addonFile, loadProblem, nativeDir, runNodeGyp, ToolchainError } from './toolchain.mjs';

const archFlag = process.argv.slice(2).find((a) => a.startsWith('--arch='));
const arch = archFlag ? archFlag.slice('--arch='.length) : process.arch;

try {
  runNodeGyp(['rebuild', `--arch=${arch}`]);
  const dir = join(nativeDir, 'prebuilds', `${process.platform}-${arch}`);
  mkdirSync(dir, { recursive: true });
  const target = join(dir, 'lookout_native.napi.node');
  copyFileSync(addonFile, target);
  // A cross build cannot be loaded here; a native one is checked before it is offered.
  if (arch === process.arch) {
    const problem = loadProblem(target);
    if (problem) throw new ToolchainError(`native: the prebuilt ${target} does not load: ${problem}`);
  }
  console.log(`native: prebuilt ${target}`);
  if (arch !== process.arch) {
    // native/build now holds the other architecture's addon; this machine's own comes back.
    runNodeGyp(['rebuild']);
  }
} catch (err) {
  console.error(err instanceof ToolchainError ? err.message : err);
  process.exit(1);
}
