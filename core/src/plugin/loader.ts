import 'reflect-metadata';
import { container as globalContainer, type DependencyContainer } from 'tsyringe';
import { z } from 'zod';
import { topicMatches, type BusPort } from '../bus/bus-port.js';
import { registerPluginErrors } from '../errors/error-table.js';
import { LookoutError } from '../errors/lookout-error.js';
import type { Logger } from '../log/logger.js';
import { RouteRegistry } from '../hub-routes/route-registry.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import type { Plugin, RuntimeInfo } from './context.js';
import { assertCoreCompatible } from './core-version.js';
import { dependencyOrder } from './dependency-order.js';
import type { PluginReport, PluginRestart } from './device-info.js';
import { isLayerEnabled } from '../layers/layers.js';
import { ManifestSchema } from './manifest.js';
import { PluginServiceDirectory } from './plugin-services.js';
import type { ServiceToken } from './service-token.js';
import { PluginSupervisor, type RestartPolicy } from './plugin-supervisor.js';

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
  /** The runtime's root container; each plugin gets a child of it. Default: a child of tsyringe's global one. */
  container?: DependencyContainer;
  /** Services the host provides (plugins name them in `requires`). */
  hostServices?: { token: ServiceToken<unknown>; value: unknown }[];
  /** Plugins whose failure stops the runtime (besides those whose manifest says `essential`). */
  essential?: string[];
  /** Backoff between restarts of a plugin that keeps failing. */
  restart?: Partial<RestartPolicy>;
}

export type PluginStatus = PluginReport;

/** The plugins of a runtime once loaded and started, with the registries they filled. */
export interface LoadedRuntime {
  /** Every enabled plugin in start order, with its live state (ok, failed, skipped, stopped…). */
  readonly plugins: PluginStatus[];
  /** Plugins of the image left off, with the reason (e.g. above the active layer). */
  readonly disabled: { name: string; reason: string }[];
  readonly tools: ToolRegistry;
  readonly routes: RouteRegistry;
  readonly ports: Record<string, number>;
  /** The surfaces plugins announced as serving TLS (the hello's `tls` list adds them). */
  readonly tlsPorts: string[];
  readonly container: DependencyContainer;
  /** A service some plugin provides, for the host (undefined when none does or its plugin is down). */
  service<T>(token: ServiceToken<T>): T | undefined;
  /**
   * Starts a failed (or skipped) plugin again, then the plugins skipped because of it. Refused while
   * it runs, while a plugin it needs is down, and during the backoff after a failed restart.
   */
  restart(name: string): Promise<PluginStatus>;
  /** Called with a plugin's report whenever its state changes (failed, skipped, restarted). */
  onChange(listener: (plugin: PluginStatus) => void): () => void;
  /** Called after every restart that ran, with how it went (the host passes it on as deviceInfo's onPluginRestart). */
  onRestart(listener: (restart: PluginRestart) => void): () => void;
  /** Stops plugins in reverse start order; returns the failures (each already logged). Idempotent. */
  stop(): Promise<LookoutError[]>;
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
 * routes, services), computes dependency order and starts each plugin with its context. A plugin
 * that fails is marked failed and its dependents skipped while the rest run; only an essential
 * plugin's failure stops what was started (in reverse) and is rethrown.
 */
export async function loadPlugins(options: LoadOptions): Promise<LoadedRuntime> {
  const { runtime } = options;
  const tools = options.tools ?? new ToolRegistry();
  const routes = options.routes ?? new RouteRegistry();
  const root = options.container ?? globalContainer.createChildContainer();
  const services = new PluginServiceDirectory(root);

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
  // A caller of a tool the layer leaves off learns why, not that the device never heard of it.
  for (const p of validated) {
    if (enabled.includes(p)) continue;
    for (const t of p.tools ?? []) tools.declareDisabled(p.name, t.name, `off (enabled from ${p.layer}, the active layer is ${runtime.layer})`);
  }
  services.provideHost(options.hostServices ?? []);
  const providers = providerNames(validated);
  for (const { token } of options.hostServices ?? []) providers.set(token.name, 'host');
  const ordered = dependencyOrder(
    enabled.map((p) => ({ plugin: p, ...serviceDependencies(p, providers) })),
    new Map(disabled.map((d) => [d.name, `off (${d.reason})`])),
  ).map((n) => n.plugin);
  checkTopicClaims(ordered);
  for (const p of ordered) {
    for (const s of p.provides ?? []) services.declare(p.name, s);
    registerPluginErrors(p.name, p.errors ?? []);
  }

  const supervisor = new PluginSupervisor({
    ...options,
    plugins: ordered,
    tools,
    routes,
    services,
    dependencies: new Map(ordered.map((p) => [p.name, serviceDependencies(p, providers)])),
    essential: new Set([...(options.essential ?? []), ...ordered.filter((p) => p.essential).map((p) => p.name)]),
    defaultStartTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
  });
  await supervisor.startAll();

  // Idempotent: a second call (a signal during an error path) waits for the first, never stops twice.
  let stopping: Promise<LookoutError[]> | undefined;
  return {
    plugins: supervisor.reports,
    disabled,
    tools,
    routes,
    get ports() {
      return supervisor.ports;
    },
    get tlsPorts() {
      return [...supervisor.tlsPorts];
    },
    container: root,
    service: (token) => services.lookup(token),
    restart: (name) => supervisor.restart(name),
    onChange: (listener) => supervisor.onChange(listener),
    onRestart: (listener) => supervisor.onRestart(listener),
    stop: () => (stopping ??= supervisor.stopAll()),
  };
}

/** Which plugin provides each token, over every plugin of the image (enabled or not). */
function providerNames(plugins: Plugin[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const p of plugins) for (const t of p.provides ?? []) map.set(t.name, p.name);
  return map;
}

/** dependsOn plus the providers of required tokens; optional ones order the start only. */
function serviceDependencies(p: Plugin, providers: Map<string, string>): { name: string; dependsOn: string[]; optionalDependsOn: string[] } {
  const providerOf = (t: ServiceToken<unknown>): string | undefined => providers.get(t.name);
  const required = (p.requires ?? []).map((t) => {
    const provider = providerOf(t);
    if (provider) return provider;
    throw new LookoutError('plugin_dependency_missing', `plugin "${p.name}" requires the service "${t.name}", which no plugin of the image provides`, {
      details: { plugin: p.name, service: t.name },
    });
  });
  const optional = (p.optionalRequires ?? []).map(providerOf);
  // The host's services (hub metrics, routes…) are there before any plugin: nothing to order by.
  const unique = (names: (string | undefined)[]) => [...new Set(names.filter((n): n is string => n !== undefined && n !== p.name && n !== 'host'))];
  return { name: p.name, dependsOn: unique([...(p.dependsOn ?? []), ...required]), optionalDependsOn: unique([...(p.optionalDependsOn ?? []), ...optional]) };
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
