import 'reflect-metadata';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { definePlugin, type Plugin, type PluginContext } from '../../../../core/src/plugin/context.js';
import { loadPlugins } from '../../../../core/src/plugin/loader.js';
import { serviceToken } from '../../../../core/src/plugin/service-token.js';

const logger = createLogger({ level: 'silent' });
const runtime = { kind: 'hub' as const, id: 'hub-s', dataDir: '/tmp' };

function plugin(name: string, extra: Partial<Plugin> = {}): Plugin {
  return definePlugin({ name, version: '1.0.0', core: '^1', start: () => undefined, ...extra });
}
const load = (plugins: Plugin[], extra: Record<string, unknown> = {}) => loadPlugins({ plugins, runtime, bus: new MemoryBus(), env: {}, logger, ...extra });

const Clock = serviceToken<{ now(): number }>('test.clock');
const Host = serviceToken<{ name: string }>('host.info');

test('a plugin resolves what it requires through ctx.services and its own tsyringe container, and nothing else', async () => {
  let ctx: PluginContext | undefined;
  const rt = await load(
    [
      plugin('provider', { provides: [Clock], start: (c) => c.services.provide(Clock, { now: () => 42 }) }),
      plugin('user', { requires: [Clock, Host], start: (c) => void (ctx = c) }),
    ],
    { hostServices: [{ token: Host, value: { name: 'test host' } }] },
  );
  assert.deepEqual(
    rt.plugins.map((p) => p.name),
    ['provider', 'user'],
    'required providers start first',
  );
  assert.equal(ctx!.services.get(Clock).now(), 42);
  assert.equal(ctx!.container.resolve<{ now(): number }>(Clock.name).now(), 42, 'tsyringe resolves the declared token');
  assert.equal(ctx!.services.get(Host).name, 'test host');
  const Other = serviceToken<unknown>('test.other');
  assert.throws(
    () => ctx!.services.get(Other),
    (e: LookoutError) => e.code === 'service_not_declared' && /"test.other"/.test(e.message),
  );
  assert.throws(() => ctx!.container.resolve(Other.name), /unregistered/);
  await rt.stop();
});

test('a stopped or failed provider’s services are gone, and asking for one says why', async () => {
  let ctx: PluginContext | undefined;
  const rt = await load([
    plugin('provider', {
      provides: [Clock],
      start: (c) => {
        c.services.provide(Clock, { now: () => 1 });
        c.clock.setTimeout(() => {
          throw new Error('crash');
        }, 5);
      },
    }),
    plugin('watcher', { optionalRequires: [Clock], start: (c) => void (ctx = c) }),
  ]);
  assert.equal(ctx!.services.optional(Clock)?.now(), 1);
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(rt.plugins[0].state, 'failed');
  assert.equal(ctx!.services.optional(Clock), undefined, 'an optional service of a failed provider is absent');
  assert.equal(rt.service(Clock), undefined);
  await rt.stop();
});

test('a required token no plugin of the image provides is a typed error naming it; an optional one is fine', async () => {
  await assert.rejects(
    load([plugin('user', { requires: [Clock] })]),
    (e: LookoutError) => e.code === 'plugin_dependency_missing' && /"test.clock"/.test(e.message),
  );
  const rt = await load([plugin('user', { optionalRequires: [Clock], start: (c) => assert.equal(c.services.optional(Clock), undefined) })]);
  assert.equal(rt.plugins[0].state, 'ok');
  await rt.stop();
});

test('providing a service the manifest does not list is refused', async () => {
  const rt = await load([plugin('sneaky', { start: (c) => c.services.provide(Clock, { now: () => 0 }) })]);
  assert.deepEqual([rt.plugins[0].state, rt.plugins[0].code], ['failed', 'service_not_declared']);
  await rt.stop();
});
