import type { DependencyContainer } from 'tsyringe';
import { LookoutError } from '../errors/lookout-error.js';
import type { PluginServices } from './context.js';
import type { ServiceToken } from './service-token.js';

interface Provider {
  plugin: string;
  /** The provider's own child container, where its values are registered; replaced at a restart. */
  container?: DependencyContainer;
  provided: Set<string>;
}

/**
 * The services of one runtime, on tsyringe: each plugin gets a child container of the runtime's root
 * container; a value a plugin provides is registered in that plugin's container only, and a plugin
 * that requires a token gets, in its own container, a factory that resolves it from the provider's.
 * So a plugin resolves exactly what its manifest declares (`requires`, `optionalRequires`, its own
 * `provides`), through `ctx.services` or `ctx.container`, and a stopped provider's container is
 * disposed: its services are gone, and asking for one says so.
 */
export class PluginServiceDirectory {
  private readonly providers = new Map<string, Provider>();

  constructor(private readonly root: DependencyContainer) {}

  /** A manifest's `provides`, claimed before anything starts (two providers of one token conflict). */
  declare(plugin: string, token: ServiceToken<unknown>): void {
    const existing = this.providers.get(token.name);
    if (existing) {
      throw new LookoutError('plugin_conflict', `plugins "${existing.plugin}" and "${plugin}" both provide the service "${token.name}"`, {
        details: { kind: 'service', name: token.name, plugins: [existing.plugin, plugin] },
      });
    }
    this.providers.set(token.name, { plugin, provided: new Set() });
  }

  /** The plugin that declared a token, if any. */
  providerOf(token: ServiceToken<unknown>): string | undefined {
    return this.providers.get(token.name)?.plugin;
  }

  /** Services the host itself provides (the hub's metrics, routes and info), under the provider name `host`. */
  provideHost(values: { token: ServiceToken<unknown>; value: unknown }[]): void {
    if (values.length === 0) return;
    const container = this.root.createChildContainer();
    for (const { token, value } of values) {
      this.declare('host', token);
      container.register(token.name, { useValue: value });
      const entry = this.providers.get(token.name)!;
      entry.container = container;
      entry.provided.add(token.name);
    }
  }

  /** A fresh child container for one start of a plugin, with a resolver for every token it requires. */
  containerFor(plugin: string, requires: ServiceToken<unknown>[], optional: ServiceToken<unknown>[]): DependencyContainer {
    const container = this.root.createChildContainer();
    for (const token of [...requires, ...optional]) {
      container.register(token.name, { useFactory: () => this.resolveFor(plugin, token, true) });
    }
    for (const entry of this.providers.values()) {
      if (entry.plugin === plugin) {
        entry.container = container;
        entry.provided.clear();
      }
    }
    return container;
  }

  /** Called when a plugin stops or fails: its values are forgotten and its container disposed. */
  async release(plugin: string, container: DependencyContainer): Promise<void> {
    for (const entry of this.providers.values()) {
      if (entry.plugin === plugin && entry.container === container) {
        entry.provided.clear();
        delete entry.container;
      }
    }
    await container.dispose();
  }

  scopeFor(
    plugin: string,
    container: DependencyContainer,
    requires: ServiceToken<unknown>[],
    optional: ServiceToken<unknown>[],
    provides: ServiceToken<unknown>[],
  ): PluginServices {
    const declared = (token: ServiceToken<unknown>) => [...requires, ...optional, ...provides].some((t) => t.name === token.name);
    const notDeclared = (token: ServiceToken<unknown>) =>
      new LookoutError(
        'service_not_declared',
        `plugin "${plugin}" asked for the service "${token.name}", which its manifest does not list in requires or optionalRequires`,
        {
          details: { plugin, service: token.name },
        },
      );
    return {
      provide: (token, value) => {
        const entry = this.providers.get(token.name);
        if (!entry || entry.plugin !== plugin) {
          throw new LookoutError('service_not_declared', `plugin "${plugin}" provided the service "${token.name}" without listing it in provides`, {
            details: { plugin, service: token.name },
          });
        }
        container.register(token.name, { useValue: value });
        entry.provided.add(token.name);
      },
      get: <T>(token: ServiceToken<T>): T => {
        if (!declared(token)) throw notDeclared(token);
        return this.resolveFor(plugin, token, true) as T;
      },
      optional: <T>(token: ServiceToken<T>): T | undefined => {
        if (!declared(token)) throw notDeclared(token);
        return this.resolveFor(plugin, token, false) as T | undefined;
      },
    };
  }

  /** For the host: any provided service (the device host reads the status plugin's last will). */
  lookup<T>(token: ServiceToken<T>): T | undefined {
    const entry = this.providers.get(token.name);
    if (!entry?.container || !entry.provided.has(token.name)) return undefined;
    return entry.container.resolve<T>(token.name);
  }

  private resolveFor(plugin: string, token: ServiceToken<unknown>, must: boolean): unknown {
    const entry = this.providers.get(token.name);
    if (!entry) {
      if (!must) return undefined;
      throw new LookoutError('service_unavailable', `plugin "${plugin}" needs the service "${token.name}", which no loaded plugin provides`, {
        details: { plugin, service: token.name },
      });
    }
    if (!entry.container || !entry.provided.has(token.name)) {
      if (!must) return undefined;
      throw new LookoutError(
        'service_unavailable',
        `the service "${token.name}" of plugin "${entry.plugin}" is not available (not provided yet, or its plugin stopped or failed)`,
        {
          details: { plugin, service: token.name, provider: entry.plugin },
        },
      );
    }
    return entry.container.resolve(token.name);
  }
}
