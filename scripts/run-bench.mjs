// Runs the compiled benchmarks one after another (never in parallel: they measure time).
// `npm run bench -- tracking` runs only benches whose name contains "tracking"; a soak only when named.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dir = join(root, 'dist', 'test', 'bench');
const filters = process.argv.slice(2);
const benches = existsSync(dir)
  ? readdirSync(dir)
      // A soak (`*-soak`) runs for an hour by default: only when it is named.
      .filter((f) => f.endsWith('.bench.js') && (filters.length === 0 ? !f.endsWith('-soak.bench.js') : filters.some((s) => f.includes(s))))
      .sort()
  : [];
if (benches.length === 0) {
  console.error('no benchmarks found');
  process.exit(1);
}
let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file.replace(/\.bench\.js$/, '')}`);
  const result = spawnSync(process.execPath, [join(dir, file)], { stdio: 'inherit', cwd: root, env: { ...process.env, LOOKOUT_LOG_LEVEL: 'silent' } });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
