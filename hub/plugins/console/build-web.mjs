// Builds the console's page (hub/plugins/console/web) into dist/hub/plugins/console/web: one
// bundled, minified script and stylesheet named by their content hash (served as immutable) and
// index.html naming them (served no-cache). Run by `npm run build` and `npm install`; nothing is
// fetched at run time and the page loads nothing from another origin. Each file gets its Brotli
// (quality 11) and gzip (level 9) twins here, `<name>.br` and `<name>.gz`: at quality 11 the source
// map alone takes seconds, which at the hub's start ran into the plugin's start timeout.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = new URL('../../..', import.meta.url).pathname;
const src = join(root, 'hub', 'plugins', 'console', 'web');
const out = join(root, 'dist', 'hub', 'plugins', 'console', 'web');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// The page takes from lookout/core/contracts only the dependency-free coordinate rule (boxOnPicture and
// detectorFrameOf, contracts/detection-frame.ts): the rest of core is Node's, and an import of
// anything else from the contracts fails this build ("No matching export").
const coreForThePage = {
  name: 'lookout-core-for-the-page',
  setup(b) {
    b.onResolve({ filter: /^lookout\/core\/contracts$/ }, () => ({ path: join(root, 'core', 'src', 'contracts', 'detection-frame.ts') }));
  },
};
const result = await build({
  entryPoints: [join(src, 'main.ts')],
  plugins: [coreForThePage],
  bundle: true,
  minify: true,
  sourcemap: 'linked',
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
  outdir: out,
  entryNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const script = outputs.find((f) => f.endsWith('.js'));
const style = outputs.find((f) => f.endsWith('.css'));
if (!script || !style) throw new Error(`esbuild made no script or stylesheet: ${outputs.join(', ')}`);
const html = readFileSync(join(src, 'index.html'), 'utf8').replace('%SCRIPT%', `/console/${script}`).replace('%STYLE%', `/console/${style}`);
writeFileSync(join(out, 'index.html'), html);
for (const name of readdirSync(out)) {
  const body = readFileSync(join(out, name));
  const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
  writeFileSync(join(out, `${name}.br`), br);
  writeFileSync(join(out, `${name}.gz`), gzipSync(body, { level: 9 }));
}
const files = readdirSync(out).sort();
console.log(`console: built ${files.length} files into ${out.slice(root.length)} (${files.join(', ')})`);
