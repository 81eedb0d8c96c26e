/**
 * The repository's habits as tests, so that `npm test` fails (with the offending files named) when
 * the code breaks the formatter's layout, or the boundary rule stops firing. ESLint on the whole tree
 * is test/lint/eslint.test.ts: each file has its own time, and that one takes most of a loaded run's.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { repoCli } from '../support/repo-cli.js';

const root = packageRoot();
test('the tree is formatted (prettier --check)', { timeout: 120_000 }, async () => {
  const { code, output } = await repoCli('prettier', ['--check', '.', '--log-level', 'warn']);
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
