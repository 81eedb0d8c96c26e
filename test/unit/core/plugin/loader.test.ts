import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { loadPlugins, validateManifest } from '../../../../core/src/plugin/loader.js';
import { definePlugin, type Plugin } from '../../../../core/src/plugin/context.js';
import { serviceToken } from '../../../../core/src/plugin/service-token.js';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { createLogger } from '../../../../core/src/log/logger.js';

const logger = createLogger({ level: 'silent' });
const runtime = { kind: 'device' as const, id: 'cam-1', dataDir: '/tmp', layer: 'layer2' as const };

function plugin(name: string, extra: Partial<Plugin> = {}): Plugin {
  return definePlugin({ name, version: '1.0.0', core: '^1', start: () => undefined, ...extra });
}

async function load(plugins: Plugin[], extra: Record<string, unknown> = {}) {
  return loadPlugins({ plugins, runtime, bus: new MemoryBus(), env: {}, logger, ...extra });
}

async function rejectsWith(promise: Promise<unknown>, code: string, ...names: string[]) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof LookoutError, `expected a LookoutError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    for (const n of names) assert.match(err.message, new RegExp(`"${n}"|${n}`), `message should name ${n}: ${err.message}`);
    return true;
  });
}

test('starts in dependency order and stops in reverse', async () => {
  const events: string[] = [];
  const mk = (name: string, dependsOn: string[] = []) =>
    plugin(name, { dependsOn, start: () => (events.push(`start ${name}`), { stop: () => void events.push(`stop ${name}`) }) });
  const rt = await load([mk('c', ['b']), mk('a'), mk('b', ['a'])]);
  assert.deepEqual(
    rt.plugins.map((p) => p.name),
    ['a', 'b', 'c'],
  );
  await rt.stop();
  assert.deepEqual(events, ['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
});

test('what a start opens after its timeout (timers, subscriptions, stop hooks) is released too', async () => {
  const bus = new MemoryBus();
  let ticks = 0;
  let delivered = 0;
  let hookRan = false;
  let lateTimer: NodeJS.Timeout | undefined;
  const slow = plugin('slow', {
    essential: true,
    startTimeoutMs: 50,
    subscriptions: ['cmd/#'],
    start: async (ctx) => {
      await new Promise((r) => setTimeout(r, 150));
      lateTimer = ctx.clock.setInterval(() => void ticks++, 5);
      await ctx.bus.subscribe('cmd/#', () => void delivered++);
      ctx.onStop(() => void (hookRan = true));
    },
  });
  try {
    await rejectsWith(loadPlugins({ plugins: [slow], runtime, bus, env: {}, logger }), 'plugin_start_timeout', 'slow');
    await new Promise((r) => setTimeout(r, 250));
    await bus.publish('devices/cam-1/cmd/x', 'late');
    assert.equal(ticks, 0, 'an interval set after the timeout must not run');
    assert.equal(delivered, 0, 'a subscription made after the timeout must be released');
    assert.ok(hookRan, 'an onStop hook added after the timeout must run');
  } finally {
    clearInterval(lateTimer); // so that this file still ends when the loader leaks it
    await bus.close();
  }
});

test('stop called twice at once stops each plugin once, and both calls see it done', async () => {
  let stops = 0;
  const rt = await load([plugin('once', { start: () => ({ stop: () => new Promise<void>((r) => setTimeout(() => (stops++, r()), 30)) }) })]);
  const [a, b] = await Promise.all([rt.stop(), rt.stop()]);
  assert.equal(stops, 1);
  assert.deepEqual([a, b], [[], []]);
  assert.equal(rt.plugins[0].state, 'stopped');
  await rt.stop();
  assert.equal(stops, 1);
});

test('a dependency cycle is a typed error naming the plugins', async () => {
  await rejectsWith(load([plugin('a', { dependsOn: ['b'] }), plugin('b', { dependsOn: ['a'] })]), 'plugin_dependency_cycle', 'a', 'b');
});

test('a missing dependency names both plugins; one above the layer says so', async () => {
  await rejectsWith(load([plugin('a', { dependsOn: ['ghost'] })]), 'plugin_dependency_missing', 'a', 'ghost');
  await assert.rejects(load([plugin('t', { layer: 'layer1', dependsOn: ['d'] }), plugin('d', { layer: 'layer3' })]), /enabled from layer3/);
});

test('optional dependencies order plugins when present and are ignored when absent', async () => {
  const order: string[] = [];
  const rt = await load([
    plugin('status', { optionalDependsOn: ['thermal', 'nowhere'], start: () => void order.push('status') }),
    plugin('thermal', { start: () => void order.push('thermal') }),
  ]);
  assert.deepEqual(order, ['thermal', 'status']);
  await rt.stop();
});

test("a wildcard topic claim that covers another plugin's topic is a conflict; neighbours are not", async () => {
  const claim = (suffix: string) => ({ topics: [{ suffix, qos: 1 as const }] });
  await rejectsWith(load([plugin('a', claim('events/+')), plugin('b', claim('events/incident'))]), 'plugin_conflict', 'a', 'b');
  await rejectsWith(load([plugin('a', claim('telemetry/can')), plugin('b', claim('telemetry/#'))]), 'plugin_conflict', 'a', 'b');
  const rt = await load([
    plugin('a', claim('telemetry')),
    plugin('b', claim('telemetry/wifi')),
    plugin('c', claim('events/incident')),
    plugin('d', claim('events/automation_log')),
  ]);
  await rt.stop();
});

test('two plugins claiming one topic, tool, route or service is a conflict naming both', async () => {
  const topic = { suffix: 'dets', qos: 1 as const };
  await rejectsWith(load([plugin('a', { topics: [topic] }), plugin('b', { topics: [topic] })]), 'plugin_conflict', 'a', 'b');
  const tool = { name: 'get_x', description: 'x', input: z.object({}) };
  await rejectsWith(load([plugin('a', { tools: [tool] }), plugin('b', { tools: [tool] })]), 'plugin_conflict', 'a', 'b');
  const route = { method: 'GET' as const, path: '/x', summary: 'x' };
  await rejectsWith(load([plugin('a', { routes: [route] }), plugin('b', { routes: [route] })]), 'plugin_conflict', 'a', 'b');
  const svc = serviceToken<number>('svc');
  await rejectsWith(load([plugin('a', { provides: [svc] }), plugin('b', { provides: [svc] })]), 'plugin_conflict', 'a', 'b');
  await rejectsWith(load([plugin('a'), plugin('a')]), 'plugin_conflict', 'a');
});

test('a start that exceeds its timeout is a typed error naming the plugin, and what started is stopped', async () => {
  const stopped: string[] = [];
  let lateStopped = false;
  const slow = plugin('slow', {
    essential: true,
    startTimeoutMs: 50,
    start: () => new Promise((resolve) => setTimeout(() => resolve({ stop: () => void (lateStopped = true) }), 150)),
  });
  await rejectsWith(load([plugin('first', { start: () => ({ stop: () => void stopped.push('first') }) }), slow]), 'plugin_start_timeout', 'slow');
  assert.deepEqual(stopped, ['first']);
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(lateStopped, 'a start that finished after its timeout must still be stopped');
});

test('a failing start names the plugin and keeps the cause', async () => {
  const boom = new Error('camera missing');
  const rt = await load([
    plugin('cam', {
      start: () => {
        throw boom;
      },
    }),
  ]);
  assert.deepEqual(rt.plugins[0], {
    name: 'cam',
    version: '1.0.0',
    state: 'failed',
    code: 'plugin_start_failed',
    message: 'plugin "cam" failed to start: camera missing',
  });
  await assert.rejects(
    load([
      plugin('cam', {
        essential: true,
        start: () => {
          throw boom;
        },
      }),
    ]),
    (err: unknown) => {
      assert.ok(err instanceof LookoutError);
      assert.equal(err.code, 'plugin_start_failed');
      assert.match(err.message, /"cam".*camera missing/);
      assert.equal(err.cause, boom);
      return true;
    },
  );
});

test('publishing to an undeclared topic is a typed error naming the plugin; declared topics go out with their QoS and mirror', async () => {
  const bus = new MemoryBus();
  let error: unknown;
  const rt = await loadPlugins({
    plugins: [
      plugin('det', {
        topics: [
          { suffix: 'telemetry', qos: 1, mirror: true },
          { suffix: 'events/+', qos: 0 },
        ],
        async start(ctx) {
          await ctx.bus.publish('telemetry', { fps: 10 });
          await ctx.bus.publish('events/incident', { type: 'incident' });
          try {
            await ctx.bus.publish('dets', {});
          } catch (err) {
            error = err;
          }
        },
      }),
    ],
    runtime,
    bus,
    env: {},
    logger,
  });
  assert.ok(error instanceof LookoutError && error.code === 'topic_not_declared' && /"det"/.test(error.message));
  assert.deepEqual(
    bus.published.map((m) => [m.topic, m.options.qos]),
    [
      ['devices/cam-1/telemetry', 1],
      ['shadow/cam-1/telemetry', 1],
      ['devices/cam-1/events/incident', 0],
    ],
  );
  await rt.stop();
});

test('a payload that fails its topic schema is refused before it leaves', async () => {
  const bus = new MemoryBus();
  await assert.rejects(
    loadPlugins({
      plugins: [
        plugin('p', {
          essential: true,
          topics: [{ suffix: 'x', qos: 1, schema: z.object({ n: z.number() }) }],
          start: (ctx) => ctx.bus.publish('x', { n: 'nope' }),
        }),
      ],
      runtime,
      bus,
      env: {},
      logger,
    }),
    /invalid "x" message/,
  );
  assert.equal(bus.published.length, 0);
});

test('subscribing to an undeclared filter and registering an undeclared tool or route are typed errors', async () => {
  await rejectsWith(
    load([plugin('p', { essential: true, start: (ctx) => ctx.bus.subscribe('cmd/#', () => undefined).then(() => undefined) })]),
    'subscription_not_declared',
    'p',
  );
  const codes: string[] = [];
  await load([
    plugin('p', {
      async start(ctx) {
        for (const f of [() => ctx.tools.register('nope', () => 1), () => ctx.routes.handle('GET', '/nope', () => 1)]) {
          try {
            f();
          } catch (err) {
            codes.push((err as LookoutError).code);
          }
        }
        await ctx.bus.subscribe('cmd/#', () => undefined).catch((err: LookoutError) => codes.push(err.code));
      },
    }),
  ]).then((rt) => rt.stop());
  assert.deepEqual(codes, ['tool_not_declared', 'route_not_declared', 'subscription_not_declared']);
});

test('services flow from a provider to plugins that depend on it, and only to them', async () => {
  const Counter = serviceToken<{ next(): number }>('counter');
  let got: number | undefined;
  let outsiderError: unknown;
  const rt = await load([
    plugin('provider', {
      provides: [Counter],
      start: (ctx) => {
        let n = 0;
        ctx.services.provide(Counter, { next: () => ++n });
      },
    }),
    plugin('user', { requires: [Counter], start: (ctx) => void (got = ctx.services.get(Counter).next()) }),
    plugin('outsider', {
      start: (ctx) => {
        try {
          ctx.services.get(Counter);
        } catch (err) {
          outsiderError = err;
        }
      },
    }),
  ]);
  assert.equal(got, 1);
  assert.ok(outsiderError instanceof LookoutError && outsiderError.code === 'service_not_declared');
  assert.equal(rt.service(Counter)?.next(), 2);
  await rt.stop();
});

test('stop releases timers, subscriptions and onStop resources, even when the plugin forgets', async () => {
  const bus = new MemoryBus();
  let ticks = 0;
  let released = false;
  const rt = await loadPlugins({
    plugins: [
      plugin('leaky', {
        subscriptions: ['cmd/#'],
        async start(ctx) {
          ctx.clock.setInterval(() => ticks++, 5);
          await ctx.bus.subscribe('cmd/#', () => ticks++);
          ctx.onStop(() => void (released = true));
        },
      }),
    ],
    runtime,
    bus,
    env: {},
    logger,
  });
  await new Promise((r) => setTimeout(r, 30));
  await rt.stop();
  const after = ticks;
  await bus.publish('devices/cam-1/cmd/x', 'hi');
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(ticks, after, 'no timer or subscription may survive stop');
  assert.ok(released);
  assert.deepEqual(
    rt.plugins.map((p) => p.state),
    ['stopped'],
  );
});

test('a manifest is validated as data before any plugin code runs', async () => {
  let ran = false;
  const bad = { name: 'Bad Name', version: 'one', core: '^1', start: () => void (ran = true) };
  await rejectsWith(load([bad]), 'plugin_manifest_invalid', 'Bad Name');
  assert.equal(ran, false);
  assert.throws(() => validateManifest({ name: 'x', version: '1.0.0', core: '^1' }), /no start function/);
  await rejectsWith(load([plugin('future', { core: '^2' })]), 'plugin_core_incompatible', 'future');
});

test('a core range the loader cannot read is an invalid manifest, never taken as compatible', async () => {
  for (const core of ['banana', '>=1.0.0 <2', '~1.0', '^1.x.y', '1.0.0.0']) {
    await rejectsWith(load([plugin('odd-range', { core })]), 'plugin_manifest_invalid', 'odd-range');
  }
  const rt = await load(['*', '^1', '^1.0', '^1.0.0', '1.x', '1', '>=1.0.0', '1.0.0'].map((core, i) => plugin(`ok-${i}`, { core })));
  await rt.stop();
});

test('plugins above the active layer are left off and reported', async () => {
  const rt = await load([plugin('base', { layer: 'layer0' }), plugin('depth', { layer: 'layer3' }), plugin('tracker', { layer: 'layer2' })]);
  assert.deepEqual(rt.plugins.map((p) => p.name).sort(), ['base', 'tracker']);
  assert.deepEqual(
    rt.disabled.map((d) => d.name),
    ['depth'],
  );
  await rt.stop();
});

test('config is parsed from the layer env; a bad value names the key, the file and the valid values', async () => {
  let seen: unknown;
  const config = z.object({ MODE: z.enum(['sim', 'zone']).default('sim'), FPS: z.coerce.number().int().min(1).default(10) });
  const rt = await load([plugin('p', { config, start: (ctx) => void (seen = ctx.config) })], { env: { FPS: '8', OTHER: 'x' } });
  assert.deepEqual(seen, { MODE: 'sim', FPS: 8 });
  await rt.stop();
  await assert.rejects(
    load([plugin('p', { config, essential: true })], { env: { MODE: 'usb' }, envSource: '/data/config/edge_v3_layer.env' }),
    (err: unknown) => {
      assert.ok(err instanceof LookoutError && err.code === 'config_invalid');
      assert.match(err.message, /MODE="usb" in \/data\/config\/edge_v3_layer.env/);
      assert.match(err.message, /valid values: sim, zone/);
      return true;
    },
  );
});

test('a bad value of a secret config key is named, never shown', async () => {
  const config = z.object({ MESH_HMAC_KEY: z.string().min(32), DEVICE_PASSWORD: z.string().regex(/^\S+$/).optional() });
  for (const [key, value] of [
    ['MESH_HMAC_KEY', 'short-mesh-secret'],
    ['DEVICE_PASSWORD', 'pass with spaces'],
  ] as const) {
    const env = { MESH_HMAC_KEY: 'k'.repeat(32), [key]: value };
    await assert.rejects(load([plugin('mesh', { config, essential: true })], { env }), (err: unknown) => {
      assert.ok(err instanceof LookoutError && err.code === 'config_invalid');
      assert.match(err.message, new RegExp(`${key}=\\[redacted\\]`));
      assert.doesNotMatch(JSON.stringify({ message: err.message, details: err.details }), new RegExp(value));
      return true;
    });
  }
});

test('the in-process bus calls a handler once per message even under overlapping filters', async () => {
  const bus = new MemoryBus();
  const seen: string[] = [];
  const handler = (topic: string) => void seen.push(topic);
  await bus.subscribe('devices/+/telemetry/#', handler);
  await bus.subscribe('devices/+/telemetry/wifi', handler);
  await bus.publish('devices/a/telemetry/wifi', '{}');
  assert.deepEqual(seen, ['devices/a/telemetry/wifi']);
});

test('a throwing subscriber of the in-process bus fails neither the publisher nor the other subscribers', async () => {
  const bus = new MemoryBus();
  const seen: string[] = [];
  await bus.subscribe('a/#', () => {
    throw new Error('broken subscriber');
  });
  await bus.subscribe('a/+', (topic) => void seen.push(topic));
  await bus.publish('a/b', 'x');
  assert.deepEqual(seen, ['a/b']);
  assert.equal(bus.handlerErrors, 1);
});

test('onStarted runs once every plugin has started, in start order; its failure marks the plugin failed and skips its dependents', async () => {
  const events: string[] = [];
  const rt = await load([
    plugin('first', {
      start: (ctx) => {
        events.push('start first');
        ctx.onStarted(() => void events.push('started first'));
      },
    }),
    plugin('second', {
      dependsOn: ['first'],
      start: (ctx) => {
        events.push('start second');
        ctx.onStarted(() => {
          throw new Error('late failure');
        });
      },
    }),
    plugin('third', { dependsOn: ['second'], start: () => void events.push('start third') }),
  ]);
  assert.deepEqual(events, ['start first', 'start second', 'start third', 'started first']);
  assert.deepEqual(
    rt.plugins.map((p) => [p.name, p.state]),
    [
      ['first', 'ok'],
      ['second', 'failed'],
      ['third', 'skipped'],
    ],
  );
  assert.match(rt.plugins[1].message!, /late failure/);
  assert.equal(rt.plugins[2].message, 'dependency_failed: second');
  await rt.stop();
});

test('onDependentsStarted runs once the plugins using its services are through (started or failed), before the later ones; after a restart, once they are back', async () => {
  const events: string[] = [];
  const VIDEO = serviceToken<{ ask(): void }>('video');
  let videoFails = false;
  const video = plugin('video', {
    provides: [VIDEO],
    start: (ctx) => {
      if (videoFails) throw new Error('no camera');
      events.push('start video');
      ctx.services.provide(VIDEO, { ask: () => void events.push('asked') });
      ctx.onDependentsStarted(() => void events.push('video: dependents through'));
      ctx.onStarted(() => void events.push('video: all started'));
    },
  });
  const rtsp = plugin('rtsp', {
    requires: [VIDEO],
    start: (ctx) => {
      events.push('start rtsp');
      ctx.services.get(VIDEO).ask();
    },
  });
  const viewer = plugin('viewer', {
    optionalRequires: [VIDEO],
    start: () => {
      events.push('start viewer');
      throw new Error('viewer broken');
    },
  });
  const late = plugin('late', { start: () => void events.push('start late') });
  const rt = await load([video, rtsp, viewer, late]);
  assert.deepEqual(events, ['start video', 'start rtsp', 'asked', 'start viewer', 'video: dependents through', 'start late', 'video: all started']);
  await rt.stop();

  // Failed at first: its dependents are skipped; restarted, they come back before its hooks run.
  events.length = 0;
  videoFails = true;
  const again = await load([video, rtsp, late]);
  assert.deepEqual(events, ['start late']);
  videoFails = false;
  await again.restart('video');
  assert.deepEqual(events, ['start late', 'start video', 'start rtsp', 'asked', 'video: dependents through', 'video: all started']);
  await again.stop();
});
