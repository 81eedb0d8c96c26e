import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { firstPartyPlugins } from '../../../core/src/images/first-party-plugins.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { pluginTable } from '../../../operator/src/plugins-command.js';

test('docs/writing-a-plugin.md shows the first-party plugins as their manifests declare them (lookout plugins)', async () => {
  const table = pluginTable(await firstPartyPlugins());
  const doc = await readFile(join(packageRoot(), 'docs', 'writing-a-plugin.md'), 'utf8');
  // Prettier pads the page's table: compare cell by cell.
  const rows = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('| `') || l.startsWith('| plugin'))
      .map((l) =>
        l
          .split('|')
          .map((c) => c.trim())
          .join('|'),
      );
  const expected = rows(table);
  const shown = rows(doc).filter((r) => expected.some((e) => e.split('|')[1] === r.split('|')[1]) && r.split('|').length === expected[0].split('|').length);
  assert.deepEqual(shown, expected, `the page's table is out of date; replace it with the output of \`lookout plugins\`:\n${table}`);
  for (const name of ['detector', 'die-temp', 'bus-cache', 'registry']) assert.match(table, new RegExp(`^\\| \`${name}\` \\|`, 'm'));
});
