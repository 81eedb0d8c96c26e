import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from 'lookout/core';
import { describerLayerEnv } from '../../../../../builder/plugins/deploy/src/describer-layer-env.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

const PROMOTED = { url: 'http://127.0.0.1:9/v1', model: 'lookout-describer-7b', artifact: 'trackl-0003' };

describe('the layer env a deploy applies with a promoted Track L model', () => {
  it('names the model as both device describers: conversational_safety_query and video_understand', async () => {
    const scratch = await scratchDir('lookout-describer-env-');
    try {
      const args = await describerLayerEnv('layer2', PROMOTED, scratch.dir);
      assert.equal(args[0], '--layer-env');
      const env = await readFile(args[1], 'utf8');
      for (const prefix of ['SAFETY_DESCRIBER', 'VIDEO_DESCRIBER']) {
        assert.match(env, new RegExp(`^${prefix}_URL=http://127\\.0\\.0\\.1:9/v1$`, 'm'));
        assert.match(env, new RegExp(`^${prefix}_MODEL=lookout-describer-7b$`, 'm'));
      }
      // The shipped layer's own settings come first, unchanged.
      const shipped = await readFile(join(packageRoot(), 'configs', 'layers', 'layer2_tracker.env'), 'utf8');
      assert.ok(env.startsWith(shipped.replace(/\n?$/, '\n')), env);
    } finally {
      await scratch.cleanup();
    }
  });

  it('adds nothing without a promoted model', async () => {
    assert.deepEqual(await describerLayerEnv('layer2', null, '/nonexistent'), []);
  });
});
