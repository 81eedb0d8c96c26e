import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layersUpTo, resolveLayer, isLayerEnabled, ALL_LAYER_ALIASES } from '../../../../core/src/layers/layers.js';
import { applyLayer, loadLayerEnv, readLayerEnvFile, selectLayer } from '../../../../core/src/layers/layer-env.js';
import { unknownEnvKeys } from '../../../../core/src/layers/unknown-keys.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';

test('every alias resolves to its layer', () => {
  const expected: Record<string, string> = {
    layer0: 'layer0',
    layer0_baseline: 'layer0',
    layer1: 'layer1',
    layer1_rfdetr: 'layer1',
    layer2: 'layer2',
    layer2_tracker: 'layer2',
    layer3: 'layer3',
    layer3_depth: 'layer3',
    layer4: 'layer4',
    layer4_thermal: 'layer4',
    layer5: 'layer5',
    full: 'layer5',
    FULL: 'layer5',
  };
  for (const [alias, layer] of Object.entries(expected)) assert.equal(resolveLayer(alias), layer, alias);
  assert.throws(
    () => resolveLayer('layer6'),
    (err: unknown) => err instanceof LookoutError && err.code === 'layer_unknown' && /valid layers: layer0, layer0_baseline/.test(err.message),
  );
});

test('layers are cumulative', () => {
  assert.deepEqual(layersUpTo('layer0'), ['layer0']);
  assert.deepEqual(layersUpTo('layer3'), ['layer0', 'layer1', 'layer2', 'layer3']);
  assert.equal(layersUpTo('layer5').length, 6);
  assert.equal(isLayerEnabled('layer2', 'layer3'), true);
  assert.equal(isLayerEnabled('layer4', 'layer3'), false);
  assert.equal(isLayerEnabled(undefined, 'layer0'), true);
});

test("each shipped layer env names its layer and carries the spec's keys cumulatively", async () => {
  for (const alias of ALL_LAYER_ALIASES) {
    const { layer, env } = await loadLayerEnv(alias);
    assert.equal(resolveLayer(env.EDGE_V3_LAYER), layer, alias);
  }
  assert.equal((await loadLayerEnv('layer0')).env.RF_DETR_STRIDE_FPS, undefined);
  assert.equal((await loadLayerEnv('layer1')).env.RF_DETR_STRIDE_FPS, '10');
  assert.equal((await loadLayerEnv('layer1')).env.TRACKER_ENABLE, undefined);
  const l3 = (await loadLayerEnv('layer3_depth')).env;
  assert.equal(l3.MONO_DEPTH_FPS, '8');
  assert.equal(l3.TRACKER_ENABLE, '1');
  assert.equal(l3.RF_DETR_STRIDE_FPS, '10');
  assert.match(l3.MONO_DEPTH_MODEL_PATH, /^\/data\/models\//);
  const full = (await loadLayerEnv('full')).env;
  for (const key of Object.keys(l3)) if (key !== 'EDGE_V3_LAYER') assert.equal(full[key], l3[key], key);
});

test('selection: flag, then the durable file, then layer2; apply writes mirror and durable atomically', async () => {
  const root = await mkdtemp(join(tmpdir(), 'lookout-layers-'));
  try {
    assert.equal((await selectLayer({ dataDir: root })).layer, 'layer2');
    assert.equal((await selectLayer({ dataDir: root, layer: 'full' })).layer, 'layer5');
    const applied = await applyLayer(root, 'layer3');
    assert.equal(applied.mirror, join(root, 'app-storage/config/edge_v3_layer.env'));
    assert.equal(applied.durable, join(root, 'data/config/edge_v3_layer.env'));
    assert.equal(await readFile(applied.mirror, 'utf8'), await readFile(applied.durable, 'utf8'));
    const selected = await selectLayer({ dataDir: root });
    assert.equal(selected.layer, 'layer3');
    assert.equal(selected.source, applied.durable);
    assert.equal((await selectLayer({ dataDir: root, layer: 'layer1' })).layer, 'layer1', 'a flag wins over the durable file');
    await assert.rejects(applyLayer(root, 'layer9'), /unknown layer "layer9"/);
    assert.equal((await selectLayer({ dataDir: root })).layer, 'layer3', 'a refused apply leaves the stack as it was');
    await assert.rejects(selectLayer({ dataDir: root, layer: 'layer1', layerEnvPath: applied.durable }), /either --layer or --layer-env/);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('an env file must name a valid layer', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lookout-layers-'));
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'none.env'), 'RF_DETR_STRIDE_FPS=10\n');
    await writeFile(join(dir, 'bad.env'), 'EDGE_V3_LAYER=layer9\n');
    await assert.rejects(readLayerEnvFile(join(dir, 'none.env')), /does not name its layer/);
    await assert.rejects(
      readLayerEnvFile(join(dir, 'bad.env')),
      (err: unknown) => err instanceof LookoutError && err.code === 'layer_unknown' && /bad\.env/.test(err.message),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('keys no plugin declares are reported with the nearest known key', () => {
  const declared = new Set(['RF_DETR_STRIDE_FPS', 'TRACKER_ENABLE', 'MONO_DEPTH_FPS']);
  const found = unknownEnvKeys({ RF_DETR_STRIDE_FSP: '10', TRACKER_ENABLE: '1', SOMETHING_ELSE: 'x', EDGE_V3_LAYER: 'full' }, declared, ['EDGE_V3_LAYER']);
  assert.deepEqual(found, [{ key: 'RF_DETR_STRIDE_FSP', hint: 'RF_DETR_STRIDE_FPS' }, { key: 'SOMETHING_ELSE' }]);
});
