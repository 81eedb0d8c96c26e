import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { ERROR_CODES } from '../../../../core/src/errors/codes.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { definePlugin } from '../../../../core/src/plugin/context.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import { ToolRegistry } from '../../../../core/src/tools/tool-registry.js';

const logger = createLogger({ level: 'silent' });

const depthTools = definePlugin({
  name: 'depth-tools',
  version: '1.0.0',
  core: '^1',
  layer: 'layer3',
  tools: [{ name: 'get_depth_status', description: 'depth status', input: z.object({}) }],
  start: (ctx) => ctx.tools.register('get_depth_status', () => ({ ok: true })),
});

test('a tool of a plugin the active layer leaves off answers "disabled at this layer", not "no tool named"', async () => {
  const runtime = await loadPlugins({
    plugins: [depthTools],
    runtime: { kind: 'device', id: 'cam-1', dataDir: '/tmp', layer: 'layer1' },
    bus: new MemoryBus(),
    env: {},
    logger,
  });
  try {
    await assert.rejects(runtime.tools.call('get_depth_status', {}), (err: unknown) => {
      assert.ok(err instanceof LookoutError);
      assert.equal(err.code, 'tool_disabled_at_layer');
      assert.equal(err.status, ERROR_CODES.tool_disabled_at_layer.status);
      assert.match(
        err.message,
        /"get_depth_status" is disabled at this layer: its plugin "depth-tools" is off \(enabled from layer3, the active layer is layer1\)/,
      );
      assert.deepEqual(err.details, {
        tool: 'get_depth_status',
        plugin: 'depth-tools',
        reason: 'off (enabled from layer3, the active layer is layer1)',
      });
      return true;
    });
    assert.deepEqual(
      runtime.tools.list().map((t) => t.decl.name),
      [],
      'a disabled tool is not listed',
    );
    await assert.rejects(runtime.tools.call('get_nothing', {}), (err: LookoutError) => err.code !== 'tool_disabled_at_layer');
  } finally {
    await runtime.stop();
  }
  const enabled = await loadPlugins({
    plugins: [depthTools],
    runtime: { kind: 'device', id: 'cam-1', dataDir: '/tmp', layer: 'layer3' },
    bus: new MemoryBus(),
    env: {},
    logger,
  });
  try {
    assert.deepEqual(await enabled.tools.call('get_depth_status', {}), { ok: true });
  } finally {
    await enabled.stop();
  }
});

test('a tool a running plugin declares wins over a disabled one of the same name', async () => {
  const tools = new ToolRegistry();
  tools.declareDisabled('old', 'get_status', 'off (enabled from layer4, the active layer is layer0)');
  tools.declare('new', { name: 'get_status', description: 'status', input: z.object({}) });
  tools.register('new', 'get_status', () => 'running');
  assert.equal(await tools.call('get_status', {}), 'running');
});
