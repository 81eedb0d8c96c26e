/**
 * The house rules beside ESLint's (test/lint/lint.test.ts), in a file of their own so that each file
 * has its own time: no import cycles (dependency-cruiser, .dependency-cruiser.cjs says which edges do
 * not count and why) and no function over the size eslint.config.js allows, outside its listed exceptions.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { repoCli } from '../support/repo-cli.js';

const root = packageRoot();
const cruise = (cwd: string, args: string[]) => repoCli('depcruise', ['--output-type', 'err', ...args], cwd);

test('no import cycles (dependency-cruiser): type-only imports and a lazy import() do not count', { timeout: 180_000 }, async () => {
  const { code, output } = await cruise(root, ['core', 'lib', 'native/ts', 'edge', 'hub', 'operator', 'plugins']);
  assert.equal(code, 0, output);
});

test('the cycle rule fires on a static cycle and lets a type-only and a lazy one pass', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lookout-cycles-'));
  try {
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
      'a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      'typed-1.ts': "import type { T2 } from './typed-2.js';\nexport type T1 = { next?: T2 };\n",
      'typed-2.ts': "import type { T1 } from './typed-1.js';\nexport type T2 = { back?: T1 };\nexport const two = 2;\n",
      'lazy-record.ts': "export const record = { open: () => import('./lazy-impl.js') };\n",
      'lazy-impl.ts': "import { record } from './lazy-record.js';\nexport const impl = record;\n",
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    writeFileSync(join(dir, '.dependency-cruiser.cjs'), readFileSync(join(root, '.dependency-cruiser.cjs'), 'utf8'));
    const { code, output } = await cruise(dir, ['.']);
    assert.notEqual(code, 0, output);
    // One violation, the static cycle a → b → a; the type-only and the lazy pair are not named.
    assert.equal(output.split('\n').filter((l) => l.includes('no-circular')).length, 1, output);
    assert.match(output, /no-circular: a\.ts\s*→\s*b\.ts\s*→\s*a\.ts/, output);
    assert.doesNotMatch(output, /typed-|lazy-/, output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the size rule fires on a function over 150 lines in a plugin, and not in a listed exception', { timeout: 120_000 }, async () => {
  // The house's own config, without the type-aware rules: the size rule needs no type information,
  // and building the project's program for these two texts took ~25 s of a 2-core machine.
  const eslint = new ESLint({ cwd: root, overrideConfig: tseslint.configs.disableTypeChecked });
  const body = Array.from({ length: 151 }, (_, i) => `  total += ${i};`).join('\n');
  const text = `export function long(): number {\n  let total = 0;\n${body}\n  return total;\n}\n`;
  const [plugin] = await eslint.lintText(text, { filePath: join(root, 'plugins', 'depth', 'src', 'fusion.ts') });
  assert.ok(
    plugin.messages.some((m) => m.ruleId === 'max-lines-per-function' && /too many lines \(155\)/.test(m.message)),
    JSON.stringify(plugin.messages),
  );
  const [exception] = await eslint.lintText(text, { filePath: join(root, 'hub', 'src', 'start-hub.ts') });
  assert.ok(!exception.messages.some((m) => m.ruleId === 'max-lines-per-function'), JSON.stringify(exception.messages));
});
