import 'reflect-metadata';
import { container as globalContainer, type DependencyContainer } from 'tsyringe';
import { z } from 'zod';
import { topicMatches, type BusPort } from '../bus/bus-port.js';
import { LookoutError, toLookoutError } from '../errors/lookout-error.js';
import type { Logger } from '../log/logger.js';
import { RouteRegistry } from '../hub-routes/route-registry.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import type { HealthState, Plugin, PluginContext, PluginInstance, RuntimeInfo } from './context.js';
import { assertCoreCompatible } from './core-version.js';
import { dependencyOrder } from './dependency-order.js';
import { isLayerEnabled } from '../layers/layers.js';
import { ManifestSchema, type LayerId } from './manifest.js';
import { createPluginBus } from './plugin-bus.js';
import { createPluginClock } from './plugin-clock.js';
import { parsePluginConfig } from './plugin-config.js';
import { ServiceRegistry } from './service-registry.js';

export interface LoadOptions {
  /** Every plugin the image carries; those above the active layer are left off. */
  plugins: Plugin[];
  runtime: RuntimeInfo;
  bus: BusPort;
  /** Environment the plugins' config keys are read from (layer env file merged with overrides). */
  env: Record<string, string | undefined>;
  /** Where `env` came from, for error messages (e.g. the env file path). */
  envSource?: string;
  logger: Logger;
  /** Default start timeout per plugin (ms). */
  startTimeoutMs?: number;
  tools?: ToolRegistry;
  routes?: RouteRegistry;
  /** Ports already listening before plugins start (e.g. the tool server). */
  ports?: Record<string, number>;
  container?: DependencyContainer;
}

export interface PluginStatus {
  name: string;
  version: string;
  layer?: LayerId;
  state: HealthState | 'stopped';
  message?: string;
}

export interface LoadedRuntime {
  /** Plugins started, in start order. */
  readonly plugins: PluginStatus[];
  /** Plugins of the image left off, with the reason (e.g. above the active layer). */
  readonly disabled: { name: string; reason: string }[];
  readonly tools: ToolRegistry;
  readonly routes: RouteRegistry;
  readonly ports: Record<string, number>;
  readonly container: DependencyContainer;
  /** Stops plugins in reverse start order; returns the failures (each already logged). Idempotent. */
  stop(): Promise<LookoutError[]>;
}

interface Started {
  plugin: Plugin;
  status: PluginStatus;
  instance?: PluginInstance | void;
  cleanups: (() => unknown)[];
  /** Set once the cleanups ran; what is added later (a start past its timeout) is released at once. */
  released: boolean;
}

export const DEFAULT_START_TIMEOUT_MS = 10_000;


/** Checks a manifest as data, before any of the plugin's code runs. */
export function validateManifest(candidate: unknown, origin = 'a plugin'): Plugin {
  const parsed = ManifestSchema.safeParse(candidate);
  const name = typeof (candidate as { name?: unknown })?.name === 'string' ? (candidate as { name: string }).name : origin;
  if (!parsed.success) {
    throw new LookoutError('plugin_manifest_invalid', `manifest of plugin "${name}" is invalid: ${z.prettifyError(parsed.error)}`, {
      details: { plugin: name, issues: parsed.error.issues },
    });
  }
  if (typeof (candidate as Plugin).start !== 'function') {
    throw new LookoutError('plugin_manifest_invalid', `plugin "${name}" has no start function`, { details: { plugin: name } });
  }
  return candidate as Plugin;
}

/**
 * Validates every manifest, leaves off plugins above the layer, checks claims (topics, tools,
 * routes, services), computes dependency order and starts each plugin with its context. A failure
 * stops what was started, in reverse, and is rethrown naming the plugin.
 */
export async function loadPlugins(options: LoadOptions): Promise<LoadedRuntime> {
  const { runtime, bus, env, logger } = options;
  const envSource = options.envSource ?? 'the environment';
  const tools = options.tools ?? new ToolRegistry();
  const routes = options.routes ?? new RouteRegistry();
  const ports: Record<string, number> = { ...(options.ports ?? {}) };
  const root = options.container ?? globalContainer.createChildContainer();
  const services = new ServiceRegistry(root);

  const validated = options.plugins.map((p) => validateManifest(p));
  const seen = new Set<string>();
  for (const p of validated) {
    if (seen.has(p.name)) throw new LookoutError('plugin_conflict', `the plugin "${p.name}" is listed twice`, { details: { kind: 'plugin', name: p.name } });
    seen.add(p.name);
    assertCoreCompatible(p.name, p.core);
  }

  const disabled: { name: string; reason: string }[] = [];
  const enabled = validated.filter((p) => {
    if (runtime.layer && !isLayerEnabled(p.layer, runtime.layer)) {
      disabled.push({ name: p.name, reason: `enabled from ${p.layer}, the active layer is ${runtime.layer}` });
      return false;
    }
    return true;
  });
  const ordered = dependencyOrder(enabled, new Map(disabled.map((d) => [d.name, `off (${d.reason})`])));
  checkTopicClaims(ordered);
  for (const p of ordered) {
    for (const t of p.tools ?? []) tools.declare(p.name, t);
    for (const r of p.routes ?? []) routes.declare(p.name, r);
    for (const s of p.provides ?? []) services.declare(p.name, s.name);
  }

  const namespace = runtime.kind === 'device' ? `devices/${runtime.id}/` : '';
  const mirrorNamespace = runtime.kind === 'device' ? `shadow/${runtime.id}/` : undefined;
  const started: Started[] = [];
  const statuses: PluginStatus[] = [];
  const whenStarted: { status: PluginStatus; log: Logger; fn: () => unknown }[] = [];

  const stopOne = async (s: Started, errors: LookoutError[]) => {
    const log = logger.child({ plugin: s.plugin.name });
    try {
      await s.instance?.stop?.();
    } catch (err) {
      errors.push(new LookoutError('plugin_stop_failed', `plugin "${s.plugin.name}" failed to stop: ${toLookoutError(err).message}`, { cause: err }));
    }
    s.released = true;
    for (const cleanup of s.cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (err) {
        errors.push(new LookoutError('plugin_stop_failed', `plugin "${s.plugin.name}" failed to release a resource: ${toLookoutError(err).message}`, { cause: err }));
      }
    }
    tools.removePlugin(s.plugin.name);
    routes.removePlugin(s.plugin.name);
    services.remove(s.plugin.name);
    s.status.state = 'stopped';
    log.debug('stopped');
  };

  const stopAll = async (): Promise<LookoutError[]> => {
    const errors: LookoutError[] = [];
    for (const s of [...started].reverse()) await stopOne(s, errors);
    started.length = 0;
    for (const e of errors) logger.error({ err: e, code: e.code }, e.message);
    return errors;
  };

  for (const plugin of ordered) {
    const log = logger.child({ plugin: plugin.name });
    const status: PluginStatus = { name: plugin.name, version: plugin.version, state: 'starting' };
    if (plugin.layer) status.layer = plugin.layer;
    const entry: Started = { plugin, status, cleanups: [], released: false };
    const addCleanup = (fn: () => unknown): void => {
      if (!entry.released) {
        entry.cleanups.push(fn);
        return;
      }
      Promise.resolve()
        .then(fn)
        .catch((err: unknown) => log.warn({ code: toLookoutError(err).code }, `a resource released late failed: ${toLookoutError(err).message}`));
    };
    started.push(entry);
    statuses.push(status);
    try {
      const config = parsePluginConfig(plugin.name, plugin.config, env, envSource);
      const clock = createPluginClock();
      entry.cleanups.push(() => clock.clearAll());
      const child = root.createChildContainer();
      entry.cleanups.push(() => child.dispose());
      const ctx: PluginContext = {
        name: plugin.name,
        runtime,
        config,
        log,
        container: child,
        bus: createPluginBus({
          plugin: plugin.name,
          port: bus,
          namespace,
          ...(mirrorNamespace ? { mirrorNamespace } : {}),
          topics: plugin.topics ?? [],
          subscriptions: plugin.subscriptions ?? [],
          track: addCleanup,
        }),
        tools: { register: (name, handler) => tools.register(plugin.name, name, handler) },
        routes: { handle: (method, path, handler) => routes.handle(plugin.name, method, path, handler) },
        services: services.scopeFor(plugin.name, plugin.dependsOn ?? [], plugin.optionalDependsOn ?? []),
        clock,
        health: {
          set(state, message) {
            status.state = state;
            if (message === undefined) delete status.message;
            else status.message = message;
          },
        },
        ports: {
          announce(name, port) {
            ports[name] = port;
          },
          all: () => ({ ...ports }),
        },
        onStop(fn) {
          addCleanup(fn);
        },
        onStarted(fn) {
          whenStarted.push({ status, log, fn });
        },
      };
      entry.instance = await withTimeout(plugin, Promise.resolve().then(() => plugin.start(ctx)), plugin.startTimeoutMs ?? options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
      if (status.state === 'starting') status.state = 'ok';
      log.debug({ version: plugin.version }, 'started');
    } catch (err) {
      const failure =
        err instanceof LookoutError && ['plugin_start_timeout', 'config_invalid', 'backend_unavailable', 'model_shape_mismatch', 'model_class_map_unmapped', 'model_package_invalid'].includes(err.code)
          ? err
          : new LookoutError('plugin_start_failed', `plugin "${plugin.name}" failed to start: ${toLookoutError(err).message}`, { cause: err, details: { plugin: plugin.name } });
      status.state = 'failed';
      await stopAll();
      throw failure;
    }
  }

  for (const { status, log, fn } of whenStarted) {
    try {
      await fn();
    } catch (err) {
      const e = toLookoutError(err);
      status.state = 'failed';
      status.message = e.message;
      log.error({ code: e.code }, `after start: ${e.message}`);
    }
  }

  // Idempotent: a second call (a signal during an error path) waits for the first, never stops twice.
  let stopping: Promise<LookoutError[]> | undefined;
  return {
    plugins: statuses,
    disabled,
    tools,
    routes,
    ports,
    container: root,
    stop: () => (stopping ??= stopAll()),
  };
}

/** One owner per topic: a claim conflicts with another plugin's when either covers the other (`events/+`, `events/incident`). */
function checkTopicClaims(plugins: Plugin[]): void {
  const claims: { suffix: string; plugin: string }[] = [];
  for (const p of plugins) {
    for (const t of p.topics ?? []) {
      const other = claims.find((c) => c.plugin !== p.name && (topicMatches(c.suffix, t.suffix) || topicMatches(t.suffix, c.suffix)));
      if (other) {
        const name = other.suffix === t.suffix ? `"${t.suffix}"` : `"${other.suffix}" / "${t.suffix}"`;
        throw new LookoutError('plugin_conflict', `plugins "${other.plugin}" and "${p.name}" both claim the topic ${name}`, {
          details: { kind: 'topic', name: t.suffix, plugins: [other.plugin, p.name] },
        });
      }
      claims.push({ suffix: t.suffix, plugin: p.name });
    }
  }
}

async function withTimeout<T>(plugin: Plugin, work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // A start that finishes after its timeout still gets stopped, so nothing it opened leaks.
      work.then((instance) => (instance as PluginInstance | void)?.stop?.(), () => undefined);
      reject(new LookoutError('plugin_start_timeout', `plugin "${plugin.name}" did not start within ${ms} ms`, { details: { plugin: plugin.name, timeoutMs: ms } }));
    }, ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
