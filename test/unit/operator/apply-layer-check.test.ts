import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LAYER_IDS } from '../../../core/src/plugin/manifest.js';
import { checkLayer } from '../../../operator/src/apply-layer-command.js';
import { scratchDir } from '../../support/scratch-dir.js';

describe('apply-layer: the layer env is checked before it reaches a device', () => {
  it('every shipped layer passes the checks of the plugins it runs, with no undeclared key', async () => {
    for (const id of LAYER_IDS) {
      const checked = await checkLayer(id);
      assert.equal(checked.layer, id);
      assert.deepEqual(checked.warnings, [], id);
    }
  });

  it('a bad value is refused naming the key and the plugin; an undeclared key is a warning with a hint', async () => {
    const { dir, cleanup } = await scratchDir('apply-layer-check-');
    try {
      const bad = join(dir, 'bad.env');
      writeFileSync(bad, 'EDGE_V3_LAYER=layer2\nRF_DETR_STRIDE_FPS=99\n');
      await assert.rejects(
        checkLayer('layer2', bad),
        (err: Error & { code?: string }) => err.code === 'config_invalid' && /RF_DETR_STRIDE_FPS="99" .* plugin "detector"/.test(err.message),
      );
      const typo = join(dir, 'typo.env');
      writeFileSync(typo, 'EDGE_V3_LAYER=layer2\nRF_DETR_STRIDE_FSP=10\n');
      const checked = await checkLayer('layer2', typo);
      assert.match(checked.warnings[0], /RF_DETR_STRIDE_FSP .* declared by no plugin; did you mean RF_DETR_STRIDE_FPS\?/);
      const other = join(dir, 'other.env');
      writeFileSync(other, 'EDGE_V3_LAYER=layer4\n');
      await assert.rejects(checkLayer('layer2', other), /names EDGE_V3_LAYER=layer4, not layer2_tracker/);
    } finally {
      await cleanup();
    }
  });
});
