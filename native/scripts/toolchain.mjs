// What building the addon needs, found or refused with a message that says what to do: node-gyp (npm
// carries one), Node's own headers (never downloaded: node-gyp is always given --nodedir), a C++
// compiler, make and python3 (scripts/setup-system.sh installs them on Debian).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const nativeDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const addonFile = join(nativeDir, 'build', 'Release', 'lookout_native.node');
export const NATIVE_ABI_VERSION = 1;

export class ToolchainError extends Error {}

const SKIP_HINT = 'LOOKOUT_NATIVE=0 npm install skips the addon (the TypeScript kernels then run, slower)';

/** npm's node-gyp while a script of npm runs, else a node-gyp package, else the one inside npm's install. */
export function nodeGypScript() {
  const candidates = [process.env.npm_config_node_gyp];
  try {
    candidates.push(createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js'));
  } catch {
    // not a dependency: npm's own follows
  }
  candidates.push(join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  const found = candidates.find((c) => c && existsSync(c));
  if (!found) throw new ToolchainError(`native: node-gyp not found (npm carries one; is npm installed beside ${process.execPath}?); ${SKIP_HINT}`);
  return found;
}

/** A folder holding include/node/node_api.h for this Node: npm_config_nodedir, else Node's own prefix. */
export function nodeHeadersDir() {
  const prefix = join(dirname(process.execPath), '..');
  const candidates = [process.env.npm_config_nodedir, prefix, '/usr', '/usr/local'].filter(Boolean);
  const found = candidates.find((d) => existsSync(join(d, 'include', 'node', 'node_api.h')) && existsSync(join(d, 'include', 'node', 'common.gypi')));
  if (!found) {
    throw new ToolchainError(
      `native: Node's C headers are not installed (looked for include/node/node_api.h under ${candidates.join(', ')}); ` +
        'the build never downloads them. Install Node with its headers (the Node.js Debian packages and the official ' +
        `tarballs carry include/node), or point npm_config_nodedir at a folder that has them; ${SKIP_HINT}`,
    );
  }
  return found;
}

function has(command, args = ['--version']) {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

/** The compiler toolchain node-gyp drives; CXX may name a cross compiler. */
export function checkToolchain() {
  const cxx = process.env.CXX || 'g++';
  const missing = [];
  if (!has(cxx)) missing.push(`a C++17 compiler (${cxx})`);
  if (!has('make')) missing.push('make');
  if (!has('python3')) missing.push('python3');
  if (missing.length) {
    throw new ToolchainError(
      `native: cannot build the addon: ${missing.join(', ')} missing. On Debian: sudo bash scripts/setup-system.sh ` +
        `(or apt-get install g++ make python3); ${SKIP_HINT}`,
    );
  }
}

/** Runs node-gyp in native/ against the local headers; `args` are node-gyp's (rebuild, --arch=…). */
export function runNodeGyp(args) {
  checkToolchain();
  const gyp = nodeGypScript();
  const nodedir = nodeHeadersDir();
  const jobs = String(Math.min(4, availableParallelism()));
  const result = spawnSync(process.execPath, [gyp, ...args, `--nodedir=${nodedir}`, '--jobs', jobs], {
    cwd: nativeDir,
    stdio: 'inherit',
    env: { ...process.env, npm_config_nodedir: nodedir },
  });
  if (result.status !== 0) throw new ToolchainError(`native: node-gyp ${args.join(' ')} failed (exit ${result.status ?? result.signal}); ${SKIP_HINT}`);
}

/** Loads a built addon in this process and checks its calling convention; returns why not, or null. */
export function loadProblem(file) {
  try {
    const addon = createRequire(import.meta.url)(file);
    return addon.abiVersion === NATIVE_ABI_VERSION ? null : `speaks version ${addon.abiVersion}, not ${NATIVE_ABI_VERSION}`;
  } catch (err) {
    return String(err?.message ?? err).split('\n')[0];
  }
}
