/**
 * The repository's habits as tests, so that `npm test` fails (with the offending files named) when
 * the code breaks the formatter's layout, or the boundary rule stops firing. ESLint on the whole tree
 * is test/lint/eslint.test.ts: each file has its own time, and that one takes most of a loaded run's.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { repoCli } from '../support/repo-cli.js';

const root = packageRoot();
/** The house config less its type-aware rules: the boundary rule reads import paths only, and building the project's program for a planted text took ~25 s of a 2-core machine. */
const WITHOUT_TYPES = tseslint.configs.disableTypeChecked;
test('the tree is formatted (prettier --check)', { timeout: 120_000 }, async () => {
  const { code, output } = await repoCli('prettier', ['--check', '.', '--log-level', 'warn']);
  assert.equal(code, 0, `run \`npx prettier --write .\`:\n${output}`);
});

test('the boundary rule fires on a deep import planted in a plugin, naming the file and the import', { timeout: 120_000 }, async () => {
  const eslint = new ESLint({ cwd: root, overrideConfig: WITHOUT_TYPES });
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
    core.messages.some((m) => m.ruleId === 'lookout/plugin-boundaries' && /core is the plugin SDK/.test(m.message)),
    JSON.stringify(core.messages),
  );
});

test('the boundary rule holds the hosts and the libraries to public entries', { timeout: 120_000 }, async () => {
  const eslint = new ESLint({ cwd: root, overrideConfig: WITHOUT_TYPES });
  const boundaryOf = async (text: string, ...path: string[]) =>
    (await eslint.lintText(text, { filePath: join(root, ...path) }))[0].messages.filter((m) => m.ruleId === 'lookout/plugin-boundaries').map((m) => m.message);
  // A host reaching into core, a library or a plugin's internals is refused; its own files and the entries pass.
  const host = await boundaryOf(
    [
      "import { ToolRegistry } from '../../core/src/tools/tool-registry.js';",
      "import { KnownHosts } from '../../lib/ssh/known-hosts.js';",
      "import { pruneRecordings } from '../../plugins/recorder/src/prune.js';",
      "import { createLogger } from 'lookout/core/host';",
      "import { connectSsh } from 'lookout/lib/ssh';",
      "import { pruneInventory } from 'lookout/plugins/recorder';",
      "import { runCommand } from './operator-command.js';",
      'export const all = [ToolRegistry, KnownHosts, pruneRecordings, createLogger, connectSsh, pruneInventory, runCommand];',
      '',
    ].join('\n'),
    'operator',
    'src',
    'readiness-command.ts',
  );
  assert.equal(host.length, 3, JSON.stringify(host, null, 2));
  assert.match(host[0], /this reaches core\/src\/tools\/tool-registry\.js/);
  assert.match(host[1], /this reaches lib\/ssh\/known-hosts\.js/);
  assert.match(host[2], /this reaches plugins\/recorder\/src\/prune\.js/);
  // A plugin may not use the hosts' entry; a library may not reach another library's files.
  const plugin = await boundaryOf(
    "import { createLogger } from 'lookout/core/host';\nexport const l = createLogger;\n",
    'plugins',
    'depth',
    'src',
    'fusion.ts',
  );
  assert.equal(plugin.length, 1, JSON.stringify(plugin));
  const library = await boundaryOf("import { sameSecret } from '../auth/device-credentials.js';\nexport const s = sameSecret;\n", 'lib', 'tls', 'tls-paths.ts');
  assert.equal(library.length, 1, JSON.stringify(library));
  // Core imports no library.
  const core = await boundaryOf("import { connectSsh } from 'lookout/lib/ssh';\nexport const c = connectSsh;\n", 'core', 'src', 'plugin', 'loader.ts');
  assert.equal(core.length, 1, JSON.stringify(core));
});
