import type { DependencyContainer } from 'tsyringe';
import { isDeclaredErrorCode } from '../errors/error-table.js';
import { LookoutError, toLookoutError } from '../errors/lookout-error.js';
import type { RouteRegistry } from '../hub-routes/route-registry.js';
import type { Logger } from '../log/logger.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { Plugin, PluginContext, PluginInstance } from './context.js';
import type { LoadOptions } from './loader.js';
import type { PluginReport, PluginRestart, PluginState } from './device-info.js';
import { createPluginBus } from './plugin-bus.js';
import { createPluginClock } from './plugin-clock.js';
import { parsePluginConfig } from './plugin-config.js';
import type { PluginServiceDirectory } from './plugin-services.js';

/** How long the supervisor waits before restarting a plugin that failed at run time. */
export interface RestartPolicy {
  /** Wait after the first failed restart; doubles with each further failure. */
  initialBackoffMs: number;
  maxBackoffMs: number;
}
const DEFAULT_RESTART: RestartPolicy = { initialBackoffMs: 5_000, maxBackoffMs: 5 * 60_000 };

/** The loader's options, with what it resolved: registries, services, dependency edges, essential plugins. */
export interface SupervisorOptions extends Pick<LoadOptions, 'plugins' | 'runtime' | 'bus' | 'env' | 'envSource' | 'logger' | 'ports' | 'restart'> {
  tools: ToolRegistry;
  routes: RouteRegistry;
  services: PluginServiceDirectory;
  dependencies: Map<string, { dependsOn: string[]; optionalDependsOn: string[] }>;
  essential: Set<string>;
  defaultStartTimeoutMs: number;
}

/** One start of a plugin: what it opened, released together when it stops or fails. */
interface Run {
  container: DependencyContainer;
  instance?: PluginInstance | void;
  cleanups: (() => unknown)[];
  /** Set once the cleanups ran; what is added later (a start past its timeout) is released at once. */
  released: boolean;
  started: (() => unknown)[];
  afterDependents: (() => unknown)[];
}

interface Entry {
  plugin: Plugin;
  report: PluginReport;
  log: Logger;
  run?: Run;
  /** Consecutive failed restarts, for the backoff. */
  failures: number;
  lastError?: LookoutError;
  retryAt: number;
}

const RUNNING: readonly PluginState[] = ['starting', 'ok', 'degraded'];

/**
 * Starts, supervises and stops the plugins of one runtime. A plugin whose start throws, whose
 * declared tools or routes are not all registered, or whose handler or timer throws later is marked
 * failed with its code and released; the plugins that need it are skipped (`dependency_failed`); the
 * rest run. Only an essential plugin's failure at start stops the runtime. A failed plugin can be
 * restarted, with a backoff when it keeps failing.
 */
export class PluginSupervisor {
  readonly reports: PluginReport[] = [];
  readonly ports: Record<string, number>;
  /** Surfaces plugins announced as serving TLS. */
  readonly tlsPorts = new Set<string>();
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(p: PluginReport) => void>();
  private readonly restartListeners = new Set<(r: PluginRestart) => void>();
  private readonly policy: RestartPolicy;
  private stopped = false;

  constructor(private readonly o: SupervisorOptions) {
    this.ports = { ...(o.ports ?? {}) };
    this.policy = { ...DEFAULT_RESTART, ...(o.restart ?? {}) };
    for (const plugin of o.plugins) {
      const report: PluginReport = { name: plugin.name, version: plugin.version, state: 'starting' };
      if (plugin.layer) report.layer = plugin.layer;
      this.reports.push(report);
      this.entries.set(plugin.name, { plugin, report, log: o.logger.child({ plugin: plugin.name }), failures: 0, retryAt: 0 });
      this.declare(plugin);
    }
  }

  onChange(listener: (p: PluginReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Told after every restart that ran (not one refused): the host hands it to plugins (deviceInfo's onPluginRestart). */
  onRestart(listener: (r: PluginRestart) => void): () => void {
    this.restartListeners.add(listener);
    return () => this.restartListeners.delete(listener);
  }

  private told(restart: PluginRestart): void {
    for (const listener of [...this.restartListeners]) {
      try {
        listener(restart);
      } catch (err) {
        this.o.logger.error({ err: toLookoutError(err) }, 'a plugin restart listener failed');
      }
    }
  }

  /**
   * Starts every plugin in order, each one's `onDependentsStarted` hooks as soon as its dependents
   * are through, then every `onStarted` hook. Throws only for an essential plugin.
   */
  async startAll(): Promise<void> {
    const through = new Set<string>();
    for (const entry of this.entries.values()) {
      const ok = await this.startOne(entry);
      if (!ok && entry.report.state === 'failed' && this.o.essential.has(entry.plugin.name)) {
        await this.stopAll();
        throw entry.lastError ?? new LookoutError('plugin_start_failed', entry.report.message, { details: { plugin: entry.plugin.name } });
      }
      through.add(entry.plugin.name);
      for (const e of this.entries.values()) {
        if (e.run?.afterDependents.length && this.dependentsOf(e.plugin.name).every((d) => through.has(d))) await this.runHooks(e, e.run.afterDependents);
      }
    }
    for (const entry of this.entries.values()) if (entry.run) await this.runHooks(entry, entry.run.started);
  }

  async restart(name: string): Promise<PluginReport> {
    const entry = this.entries.get(name);
    if (!entry)
      throw new LookoutError('plugin_unknown', `no plugin named "${name}" runs on this device`, { details: { plugin: name, known: [...this.entries.keys()] } });
    if (RUNNING.includes(entry.report.state)) {
      throw new LookoutError('plugin_not_restartable', `plugin "${name}" is ${entry.report.state}; only a failed or skipped plugin is restarted`, {
        details: { plugin: name, state: entry.report.state },
      });
    }
    const down = this.downDependency(entry);
    if (down) {
      throw new LookoutError(
        'plugin_not_restartable',
        `plugin "${name}" needs "${down}", which is ${this.entries.get(down)!.report.state}: restart that one first`,
        { details: { plugin: name, needs: down } },
      );
    }
    const wait = entry.retryAt - Date.now();
    if (wait > 0) {
      throw new LookoutError('plugin_restart_backoff', `plugin "${name}" failed again recently; retry in ${Math.ceil(wait / 1000)} s`, {
        details: { plugin: name, retry_after_ms: wait },
      });
    }
    entry.log.info('restarting');
    const at = new Date().toISOString();
    // A plugin that marked itself failed may still hold what it registered (a status tool).
    await this.release(entry, []);
    const failed = () => {
      entry.failures += 1;
      entry.retryAt = Date.now() + Math.min(this.policy.initialBackoffMs * 2 ** (entry.failures - 1), this.policy.maxBackoffMs);
      this.told({ plugin: { ...entry.report }, dependents: [], at });
      return { ...entry.report };
    };
    if (!(await this.startOne(entry))) return failed();
    // The plugins skipped because of this one come back with it, in start order, then the hooks.
    const back = [entry];
    for (const other of this.entries.values()) {
      if (other.report.state === 'skipped' && !this.downDependency(other) && (await this.startOne(other))) back.push(other);
    }
    for (const e of back) if (e.run) await this.runHooks(e, e.run.afterDependents);
    for (const e of back) if (e.run) await this.runHooks(e, e.run.started);
    // A hook that failed took the plugin down again (and what needs it): a failed restart.
    if (!RUNNING.includes(entry.report.state)) return failed();
    entry.failures = 0;
    entry.retryAt = 0;
    const dependents = back
      .slice(1)
      .filter((e) => RUNNING.includes(e.report.state))
      .map((e) => e.plugin.name);
    this.told({ plugin: { ...entry.report }, dependents, at });
    return { ...entry.report };
  }

  async stopAll(): Promise<LookoutError[]> {
    this.stopped = true;
    const errors: LookoutError[] = [];
    for (const entry of [...this.entries.values()].reverse()) {
      if (entry.run) await this.release(entry, errors);
      if (entry.report.state !== 'failed' && entry.report.state !== 'skipped') this.setState(entry, 'stopped');
    }
    for (const e of errors) this.o.logger.error({ err: e, code: e.code }, e.message);
    return errors;
  }

  /** Declares (again, after a stop released them) the plugin's tools and routes. */
  private declare(plugin: Plugin): void {
    this.o.tools.removePlugin(plugin.name);
    this.o.routes.removePlugin(plugin.name);
    for (const t of plugin.tools ?? []) this.o.tools.declare(plugin.name, t);
    for (const r of plugin.routes ?? []) this.o.routes.declare(plugin.name, r);
  }

  /** The first required plugin that is not running, if any. */
  private downDependency(entry: Entry): string | undefined {
    const deps = this.o.dependencies.get(entry.plugin.name)?.dependsOn ?? [];
    return deps.find((d) => {
      const state = this.entries.get(d)?.report.state;
      return state !== 'ok' && state !== 'degraded';
    });
  }

  private async startOne(entry: Entry): Promise<boolean> {
    const { plugin, log } = entry;
    const down = this.downDependency(entry);
    if (down) {
      this.setState(entry, 'skipped', 'dependency_failed', `dependency_failed: ${down}`);
      return false;
    }
    this.declare(plugin);
    this.setState(entry, 'starting');
    const container = this.o.services.containerFor(plugin.name, plugin.requires ?? [], plugin.optionalRequires ?? []);
    const run: Run = { container, cleanups: [], released: false, started: [], afterDependents: [] };
    entry.run = run;
    try {
      const ctx = this.context(entry, run);
      run.instance = await withTimeout(
        plugin,
        Promise.resolve().then(() => plugin.start(ctx)),
        plugin.startTimeoutMs ?? this.o.defaultStartTimeoutMs,
      );
      this.assertComplete(plugin);
      if (entry.report.state === 'starting') this.setState(entry, 'ok');
      log.debug({ version: plugin.version }, 'started');
      return entry.report.state !== 'failed';
    } catch (err) {
      const failure = startFailure(plugin.name, err);
      entry.lastError = failure;
      log.error({ code: failure.code }, failure.message);
      await this.release(entry, []);
      this.setState(entry, 'failed', failure.code, failure.message);
      return false;
    }
  }

  private context(entry: Entry, run: Run): PluginContext {
    const { plugin, log } = entry;
    const o = this.o;
    const addCleanup = (fn: () => unknown): void => {
      if (!run.released) {
        run.cleanups.push(fn);
        return;
      }
      Promise.resolve()
        .then(fn)
        .catch((err: unknown) => log.warn({ code: toLookoutError(err).code }, `a resource released late failed: ${toLookoutError(err).message}`));
    };
    const fault = (err: unknown): void => void this.failLater(entry, run, err);
    const clock = createPluginClock(Date.now, fault);
    run.cleanups.push(() => clock.clearAll());
    const namespace = o.runtime.kind === 'device' ? `devices/${o.runtime.id}/` : '';
    return {
      name: plugin.name,
      runtime: o.runtime,
      config: parsePluginConfig(plugin.name, plugin.config, o.env, o.envSource ?? 'the environment'),
      log,
      container: run.container,
      bus: createPluginBus({
        plugin: plugin.name,
        port: o.bus,
        namespace,
        ...(o.runtime.kind === 'device' ? { mirrorNamespace: `shadow/${o.runtime.id}/` } : {}),
        topics: plugin.topics ?? [],
        subscriptions: plugin.subscriptions ?? [],
        track: addCleanup,
        fault,
      }),
      tools: { register: (name, handler) => o.tools.register(plugin.name, name, handler) },
      routes: { handle: (method, path, handler) => o.routes.handle(plugin.name, method, path, handler) },
      services: o.services.scopeFor(plugin.name, run.container, plugin.requires ?? [], plugin.optionalRequires ?? [], plugin.provides ?? []),
      clock,
      health: {
        set: (state, message) => {
          if (entry.run === run) this.setState(entry, state, undefined, message);
        },
        fail: (err) => {
          const e = toLookoutError(err);
          if (entry.run === run) this.setState(entry, 'failed', e.code, e.message);
        },
      },
      ports: {
        announce: (name, port, options) => {
          this.ports[name] = port;
          if (options?.tls) this.tlsPorts.add(name);
          else this.tlsPorts.delete(name);
        },
        all: () => ({ ...this.ports }),
        tls: () => [...this.tlsPorts],
      },
      onStop: addCleanup,
      onStarted: (fn) => {
        run.started.push(fn);
      },
      onDependentsStarted: (fn) => {
        run.afterDependents.push(fn);
      },
    };
  }

  /** Every declared tool and route must have a handler once start returns. */
  private assertComplete(plugin: Plugin): void {
    const tools = (plugin.tools ?? []).filter((t) => !this.o.tools.get(t.name)).map((t) => t.name);
    const routes = (plugin.routes ?? [])
      .filter((r) => !this.o.routes.list().some((e) => e.plugin === plugin.name && e.decl.method === r.method && e.decl.path === r.path))
      .map((r) => `${r.method} ${r.path}`);
    if (tools.length === 0 && routes.length === 0) return;
    const what = [tools.length ? `tools ${tools.join(', ')}` : '', routes.length ? `routes ${routes.join(', ')}` : ''].filter(Boolean).join(' and ');
    throw new LookoutError('plugin_start_failed', `plugin "${plugin.name}" declared ${what} but did not register them during start`, {
      details: { plugin: plugin.name, unregistered_tools: tools, unregistered_routes: routes },
    });
  }

  /** The plugins that need `name` or use it when present. */
  private dependentsOf(name: string): string[] {
    return [...this.o.dependencies].filter(([, d]) => d.dependsOn.includes(name) || d.optionalDependsOn.includes(name)).map(([n]) => n);
  }

  /** Runs the hooks (each once) of a running plugin; the first to fail fails it. */
  private async runHooks(entry: Entry, hooks: (() => unknown)[]): Promise<void> {
    const run = entry.run;
    if (!run || !RUNNING.includes(entry.report.state)) return;
    for (const fn of hooks.splice(0)) {
      try {
        await fn();
      } catch (err) {
        await this.failLater(entry, run, err);
        return;
      }
    }
  }

  /** A failure after start (a hook, a subscription handler, a timer): the plugin and what needs it go down. */
  private async failLater(entry: Entry, run: Run, err: unknown): Promise<void> {
    if (entry.run !== run || run.released || this.stopped) return;
    const e = toLookoutError(err);
    entry.log.error({ code: e.code }, `failed after start: ${e.message}`);
    await this.release(entry, []);
    this.setState(entry, 'failed', e.code, e.message);
    for (const other of [...this.entries.values()].reverse()) {
      if (other.run && this.downDependency(other)) {
        await this.release(other, []);
        this.setState(other, 'skipped', 'dependency_failed', `dependency_failed: ${this.downDependency(other)}`);
      }
    }
  }

  private async release(entry: Entry, errors: LookoutError[]): Promise<void> {
    const run = entry.run;
    if (!run || run.released) return;
    const name = entry.plugin.name;
    try {
      await run.instance?.stop?.();
    } catch (err) {
      errors.push(new LookoutError('plugin_stop_failed', `plugin "${name}" failed to stop: ${toLookoutError(err).message}`, { cause: err }));
    }
    run.released = true;
    for (const cleanup of run.cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (err) {
        errors.push(new LookoutError('plugin_stop_failed', `plugin "${name}" failed to release a resource: ${toLookoutError(err).message}`, { cause: err }));
      }
    }
    this.o.tools.removePlugin(name);
    this.o.routes.removePlugin(name);
    await this.o.services.release(name, run.container).catch(() => undefined);
    entry.run = undefined;
    entry.log.debug('stopped');
  }

  private setState(entry: Entry, state: PluginState, code?: string, message?: string): void {
    const r = entry.report;
    const changed = r.state !== state || r.code !== code || r.message !== message;
    r.state = state;
    if (code === undefined) delete r.code;
    else r.code = code;
    if (message === undefined) delete r.message;
    else r.message = message;
    if (!changed || state === 'starting') return;
    for (const listener of this.listeners) {
      try {
        listener({ ...r });
      } catch (err) {
        this.o.logger.warn({ code: toLookoutError(err).code }, `a plugin state listener failed: ${toLookoutError(err).message}`);
      }
    }
  }
}

/** A LookoutError with a declared code (the core's or a plugin's own) passes through; anything else is wrapped. */
function startFailure(plugin: string, err: unknown): LookoutError {
  if (err instanceof LookoutError && isDeclaredErrorCode(err.code)) return err;
  return new LookoutError('plugin_start_failed', `plugin "${plugin}" failed to start: ${toLookoutError(err).message}`, { cause: err, details: { plugin } });
}

async function withTimeout<T>(plugin: Plugin, work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // A start that finishes after its timeout still gets stopped, so nothing it opened leaks.
      work.then(
        (instance) => (instance as PluginInstance | void)?.stop?.(),
        () => undefined,
      );
      reject(
        new LookoutError('plugin_start_timeout', `plugin "${plugin.name}" did not start within ${ms} ms`, { details: { plugin: plugin.name, timeoutMs: ms } }),
      );
    }, ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
