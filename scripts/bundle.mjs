// `npm run bundle`: a self-contained release bundle of the device runtime (lookout-edge) for
// `lookout deploy`: the compiled core, edge and device plugins, configs, the native addon built for
// this machine's architecture (native/prebuilds for others when present), the production
// node_modules, a package.json stamped with the release version, the systemd unit, and BUNDLE.json
// (version, arch, node, built_at). The hub and the operator CLI are not in it.
//
//   node scripts/bundle.mjs [--out <file.tar.gz>] [--version <v>] [--arch <arch>] [--no-modules]
//
// --no-modules leaves node_modules out: the release then uses the device's shared
// /opt/lookout/node_modules (node looks there from /opt/lookout/releases/<v>), installed once.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    version: { type: 'string' },
    arch: { type: 'string', default: process.arch },
    'no-modules': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log('node scripts/bundle.mjs [--out <file.tar.gz>] [--version <v>] [--arch <arch>] [--no-modules]');
  process.exit(0);
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const version = values.version ?? pkg.version;
if (!/^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/.test(version)) {
  console.error(`--version: letters, digits and . + _ - (at most 64), not "${version}"`);
  process.exit(2);
}
if (!existsSync(join(root, 'dist', 'edge', 'src', 'edge-cli.js'))) {
  console.error('dist/ is not built: run `npm run build` first (npm run bundle does)');
  process.exit(1);
}
if (values.arch !== process.arch && !existsSync(join(root, 'native', 'prebuilds', `linux-${values.arch}`)) && !values['no-modules']) {
  console.error(
    `no native prebuild for linux-${values.arch} in native/prebuilds (npm run native:prebuild) and node_modules of ${process.arch} would not run there`,
  );
  process.exit(1);
}
const out = resolve(values.out ?? join(root, 'dist-bundle', `lookout-edge-${version}-linux-${values.arch}.tar.gz`));

const stage = mkdtempSync(join(tmpdir(), 'lookout-bundle-'));
try {
  const copy = (rel, to = rel) => {
    if (existsSync(join(root, rel))) cpSync(join(root, rel), join(stage, to), { recursive: true, dereference: true });
  };
  for (const dir of ['core', 'lib', 'native', 'edge', 'plugins']) copy(join('dist', dir));
  copy('configs');
  copy(join('bin', 'lookout-edge.js'));
  copy(join('deploy', 'lookout-edge.service'));
  if (values.arch === process.arch) copy(join('native', 'build', 'Release', 'lookout_native.node'));
  copy(join('native', 'prebuilds', `linux-${values.arch}`));
  const { scripts: _scripts, devDependencies: _dev, bin: _bin, ...rest } = pkg;
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify({ ...rest, version, bin: { 'lookout-edge': 'bin/lookout-edge.js' } }, null, 2)}\n`);
  if (!values['no-modules']) {
    // The production closure as the lockfile records it: every installed package not marked dev-only.
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
    for (const [path, entry] of Object.entries(lock.packages ?? {})) {
      if (!path.startsWith('node_modules/') || entry.dev || entry.link) continue;
      if (!existsSync(join(root, path))) continue;
      mkdirSync(dirname(join(stage, path)), { recursive: true });
      if (!existsSync(join(stage, path))) cpSync(join(root, path), join(stage, path), { recursive: true, dereference: true });
    }
  }
  const manifest = {
    name: 'lookout-edge',
    version,
    arch: values.arch,
    node: process.versions.node,
    modules: !values['no-modules'],
    built_at: new Date().toISOString(),
  };
  writeFileSync(join(stage, 'BUNDLE.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  mkdirSync(dirname(out), { recursive: true });
  execFileSync('tar', ['-czf', out, '-C', stage, '.']);
  console.log(JSON.stringify({ bundle: out, ...manifest }));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
