import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Recipe } from './executors/train-executor.js';

/** The setup script of the reference recipe's Python environment, named by every "missing" error. */
export const RFDETR_SETUP_SCRIPT = 'scripts/setup-rfdetr-env.sh';

/**
 * The recipes a launch may name. `rfdetr` trains RF-DETR with the rfdetr package and exports 544;
 * `rfdetr-omni` is the Omni recipe at 672; `test-double` is the named test double (no Python, no
 * GPU; a real ONNX of the declared shape), what npm test and the walk-through use.
 */
export function builtInRecipes(o: { rfdetrVenv: string; recipesDir?: string }): Record<string, Recipe> {
  // From dist/builder/plugins/training/src/ to builder/plugins/training/recipes/ in the source tree.
  const pyDir = o.recipesDir ?? fileURLToPath(new URL('../../../../../builder/plugins/training/recipes/', import.meta.url));
  const python = join(o.rfdetrVenv, 'bin', 'python');
  const script = join(pyDir, 'train_rfdetr.py');
  const unavailable = () =>
    existsSync(python) ? undefined : `the rfdetr recipe's Python environment is missing (${python}); make it with ${RFDETR_SETUP_SCRIPT} ${o.rfdetrVenv}`;
  return {
    rfdetr: { name: 'rfdetr', command: [python, script], defaultInputSize: 544, unavailable },
    'rfdetr-omni': { name: 'rfdetr-omni', command: [python, script], defaultInputSize: 672, unavailable },
    'test-double': {
      name: 'test-double',
      command: [process.execPath, fileURLToPath(new URL('./recipes/test-double-recipe.js', import.meta.url))],
      defaultInputSize: 544,
    },
  };
}
