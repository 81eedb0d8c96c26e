import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { errorInfo } from '../../../../core/src/errors/error-table.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { definePlugin, type Plugin } from '../../../../core/src/plugin/context.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import { serviceToken } from '../../../../core/src/plugin/service-token.js';

const logger = createLogger({ level: 'silent' });
const runtime = { kind: 'device' as const, id: 'cam-s', dataDir: '/tmp', layer: 'layer2' as const };

function plugin(name: string, extra: Partial<Plugin> = {}): Plugin {
  return definePlugin({ name, version: '1.0.0', core: '^1', start: () => undefined, ...extra });
}

const load = (plugins: Plugin[], extra: Record<string, unknown> = {}) => loadPlugins({ plugins, runtime, bus: new MemoryBus(), env: {}, logger, ...extra });
const states = (rt: { plugins: { name: string; state: string }[] }) => rt.plugins.map((p) => [p.name, p.state]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a plugin failing at start leaves the others running; what requires it is skipped with the reason', async () => {
  const Svc = serviceToken<{ n: number }>('svc');
  const rt = await load([
    plugin('base'),
    plugin('broken', {
      provides: [Svc],
      start: () => {
        throw new Error('no camera');
      },
    }),
    plugin('user', { requires: [Svc] }),
    plugin('bystander', { dependsOn: ['base'] }),
  ]);
  assert.deepEqual(states(rt), [
    ['base', 'ok'],
    ['broken', 'failed'],
    ['user', 'skipped'],
    ['bystander', 'ok'],
  ]);
  assert.deepEqual(rt.plugins[2], { name: 'user', version: '1.0.0', state: 'skipped', code: 'dependency_failed', message: 'dependency_failed: broken' });
  await rt.stop();
});

test('a declared tool or route never registered fails its plugin, naming them', async () => {
  const rt = await load([
    plugin('lazy', {
      tools: [
        { name: 'done_tool', description: 'registered', input: z.object({}) },
        { name: 'forgotten_tool', description: 'never registered', input: z.object({}) },
      ],
      routes: [{ method: 'GET', path: '/forgotten', summary: 'never handled' }],
      start: (ctx) => ctx.tools.register('done_tool', () => 1),
    }),
  ]);
  const report = rt.plugins[0];
  assert.deepEqual([report.state, report.code], ['failed', 'plugin_start_failed']);
  assert.match(report.message!, /forgotten_tool/);
  assert.match(report.message!, /GET \/forgotten/);
  assert.equal(rt.tools.get('done_tool'), undefined, 'a failed plugin serves nothing');
  await rt.stop();
});

test('a LookoutError with a declared code passes through; a plugin code it did not declare is wrapped', async () => {
  const rt = await load([
    plugin('own', {
      errors: [{ code: 'lens_dirty', status: 409, description: 'the lens needs cleaning' }],
      start: () => {
        throw new LookoutError('own.lens_dirty', 'clean me');
      },
    }),
    plugin('core-coded', {
      start: () => {
        throw new LookoutError('backend_unavailable', 'no DSP');
      },
    }),
    plugin('undeclared', {
      start: () => {
        throw new LookoutError('undeclared.surprise', 'surprise');
      },
    }),
  ]);
  assert.deepEqual(
    rt.plugins.map((p) => [p.name, p.code]),
    [
      ['own', 'own.lens_dirty'],
      ['core-coded', 'backend_unavailable'],
      ['undeclared', 'plugin_start_failed'],
    ],
  );
  assert.deepEqual([errorInfo('own.lens_dirty')?.status, new LookoutError('own.lens_dirty').status], [409, 409]);
  await rt.stop();
});

test('a subscription handler or a timer that throws later fails its plugin and stops its dependents; the process goes on', async () => {
  const bus = new MemoryBus();
  const Svc = serviceToken<object>('ticker');
  let dependentStopped = false;
  const rt = await loadPlugins({
    plugins: [
      plugin('listener', {
        subscriptions: ['cmd/#'],
        start: (ctx) =>
          ctx.bus
            .subscribe('cmd/#', () => {
              throw new Error('bad handler');
            })
            .then(() => undefined),
      }),
      plugin('ticker', {
        provides: [Svc],
        start: (ctx) => {
          ctx.services.provide(Svc, {});
          ctx.clock.setTimeout(() => {
            throw new Error('bad tick');
          }, 5);
        },
      }),
      plugin('user', { requires: [Svc], start: () => ({ stop: () => void (dependentStopped = true) }) }),
    ],
    runtime,
    bus,
    env: {},
    logger,
  });
  const changes: string[] = [];
  rt.onChange((p) => changes.push(`${p.name}:${p.state}`));
  await bus.publish('devices/cam-s/cmd/x', '{}');
  await sleep(30);
  assert.deepEqual(states(rt), [
    ['listener', 'failed'],
    ['ticker', 'failed'],
    ['user', 'skipped'],
  ]);
  assert.match(rt.plugins[1].message!, /bad tick/);
  assert.ok(dependentStopped, 'the dependent was stopped');
  assert.deepEqual(changes, ['listener:failed', 'ticker:failed', 'user:skipped']);
  await rt.stop();
});

test('restart brings a failed plugin and its skipped dependents back; failing again starts a growing backoff', async () => {
  let attempts = 0;
  let healthy = false;
  const Svc = serviceToken<{ ok: true }>('flaky-svc');
  const rt = await load(
    [
      plugin('flaky', {
        provides: [Svc],
        start: (ctx) => {
          attempts++;
          if (!healthy) throw new Error(`attempt ${attempts}`);
          ctx.services.provide(Svc, { ok: true });
        },
      }),
      plugin('user', { requires: [Svc], start: (ctx) => void ctx.services.get(Svc) }),
    ],
    // Wide enough that a loaded machine's pauses stay well inside each wait and each window.
    { restart: { initialBackoffMs: 400, maxBackoffMs: 1000 } },
  );
  // Every restart that ran is told (the status plugin publishes it as events/automation_log); a refused one is not.
  const told: [string, string, string[]][] = [];
  rt.onRestart((r) => told.push([r.plugin.name, r.plugin.state, r.dependents]));
  assert.deepEqual(states(rt), [
    ['flaky', 'failed'],
    ['user', 'skipped'],
  ]);
  await assert.rejects(rt.restart('user'), (e: LookoutError) => e.code === 'plugin_not_restartable' && /needs "flaky"/.test(e.message));
  assert.equal((await rt.restart('flaky')).state, 'failed', 'the first restart runs at once');
  await assert.rejects(rt.restart('flaky'), (e: LookoutError) => e.code === 'plugin_restart_backoff' && e.status === 429);
  await sleep(450);
  assert.equal((await rt.restart('flaky')).state, 'failed');
  await sleep(450);
  await assert.rejects(rt.restart('flaky'), { code: 'plugin_restart_backoff' }, 'the backoff doubled to 800 ms');
  await sleep(400);
  healthy = true;
  assert.equal((await rt.restart('flaky')).state, 'ok');
  assert.deepEqual(states(rt), [
    ['flaky', 'ok'],
    ['user', 'ok'],
  ]);
  assert.equal(rt.service(Svc)?.ok, true);
  assert.deepEqual(told, [
    ['flaky', 'failed', []],
    ['flaky', 'failed', []],
    ['flaky', 'ok', ['user']],
  ]);
  await assert.rejects(rt.restart('flaky'), { code: 'plugin_not_restartable' });
  await assert.rejects(rt.restart('ghost'), { code: 'plugin_unknown' });
  await rt.stop();
  assert.deepEqual(states(rt), [
    ['flaky', 'stopped'],
    ['user', 'stopped'],
  ]);
});

test('an essential plugin that fails stops what started and is thrown', async () => {
  let stopped = false;
  await assert.rejects(
    load(
      [
        plugin('first', { start: () => ({ stop: () => void (stopped = true) }) }),
        plugin('identity', {
          start: () => {
            throw new LookoutError('config_invalid', 'bad key');
          },
        }),
      ],
      { essential: ['identity'] },
    ),
    { code: 'config_invalid', message: 'bad key' },
  );
  assert.ok(stopped);
});

test('a restart whose hook fails is a failed restart: its dependents are down again and not told as back, and the backoff applies', async () => {
  let hookFails = false;
  let startFails = true;
  const Svc = serviceToken<{ ok: true }>('hooked-svc');
  const rt = await load(
    [
      plugin('hooked', {
        provides: [Svc],
        start: (ctx) => {
          if (startFails) throw new Error('not yet');
          ctx.services.provide(Svc, { ok: true });
          ctx.onDependentsStarted(() => {
            if (hookFails) throw new Error('hook broke');
          });
        },
      }),
      plugin('user', { requires: [Svc], start: (ctx) => void ctx.services.get(Svc) }),
    ],
    { restart: { initialBackoffMs: 60_000, maxBackoffMs: 60_000 } },
  );
  const told: [string, string, string[]][] = [];
  rt.onRestart((r) => told.push([r.plugin.name, r.plugin.state, r.dependents]));
  startFails = false;
  hookFails = true;
  const report = await rt.restart('hooked');
  assert.equal(report.state, 'failed');
  assert.match(report.message ?? '', /hook broke/);
  assert.deepEqual(states(rt), [
    ['hooked', 'failed'],
    ['user', 'skipped'],
  ]);
  assert.deepEqual(told, [['hooked', 'failed', []]]);
  await assert.rejects(rt.restart('hooked'), { code: 'plugin_restart_backoff' });
  await rt.stop();
});
