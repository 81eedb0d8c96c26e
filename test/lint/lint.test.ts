/**
 * The repository's habits as tests, so that `npm test` fails (with the offending files named) when
 * the code breaks the boundary rule, ESLint's type-checked rules or the formatter's layout.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ESLint } from 'eslint';
import { packageRoot } from '../../core/src/paths/package-root.js';

const root = packageRoot();
const run = promisify(execFile);
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

async function cli(name: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(bin(name), args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

test('ESLint (typescript-eslint type-checked rules and the boundary rule) passes on the whole tree', { timeout: 300_000 }, async () => {
  const { code, output } = await cli('eslint', ['.', '--max-warnings', '0']);
  assert.equal(code, 0, output);
});

test('the tree is formatted (prettier --check)', { timeout: 120_000 }, async () => {
  const { code, output } = await cli('prettier', ['--check', '.', '--log-level', 'warn']);
  assert.equal(code, 0, `run \`npx prettier --write .\`:\n${output}`);
});

test('the boundary rule fires on a deep import planted in a plugin, naming the file and the import', { timeout: 120_000 }, async () => {
  const eslint = new ESLint({ cwd: root });
  const planted = [
    "import { LookoutError } from '../../../core/src/errors/lookout-error.js';",
    "import { Preprocessor } from '../../detector/src/model/preprocess.js';",
    "import { FrameSourceToken } from '../../camera/src/service.js';",
    'export const planted = [LookoutError, Preprocessor, FrameSourceToken];',
    '',
  ].join('\n');
  const [result] = await eslint.lintText(planted, { filePath: join(root, 'plugins', 'depth', 'src', 'fusion.ts') });
  const boundary = result.messages.filter((m) => m.ruleId === 'lookout/plugin-boundaries').map((m) => m.message);
  assert.equal(boundary.length, 2, JSON.stringify(result.messages, null, 2));
  assert.match(
    boundary[0],
    /^plugins\/depth\/src\/fusion\.ts imports "\.\.\/\.\.\/\.\.\/core\/src\/errors\/lookout-error\.js": a plugin imports only 'lookout\/core'/,
  );
  assert.match(boundary[1], /"\.\.\/\.\.\/detector\/src\/model\/preprocess\.js".*this reaches plugins\/detector\/src\/model\/preprocess\.js/);
  const [core] = await eslint.lintText("import x from '../../../plugins/camera/src/index.js';\nexport default x;\n", {
    filePath: join(root, 'core', 'src', 'plugin', 'loader.ts'),
  });
  assert.ok(
    core.messages.some((m) => m.ruleId === 'lookout/plugin-boundaries' && /core is the SDK both sides share/.test(m.message)),
    JSON.stringify(core.messages),
  );
});
