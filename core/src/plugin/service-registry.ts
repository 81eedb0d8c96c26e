import type { DependencyContainer } from 'tsyringe';
import { LookoutError } from '../errors/lookout-error.js';
import type { PluginServices } from './context.js';
import type { ServiceToken } from './service-token.js';

interface Provided {
  provider: string;
  value?: unknown;
  ready: boolean;
}

/**
 * Named services of a runtime. A plugin provides only what its manifest lists, and uses only the
 * services of plugins it depends on; each value is also registered in the root DI container
 * under the service name, for first-party code that resolves through tsyringe.
 */
export class ServiceRegistry {
  private readonly services = new Map<string, Provided>();

  constructor(private readonly root: DependencyContainer) {}

  declare(provider: string, name: string): void {
    const existing = this.services.get(name);
    if (existing) {
      throw new LookoutError('plugin_conflict', `plugins "${existing.provider}" and "${provider}" both provide the service "${name}"`, {
        details: { kind: 'service', name, plugins: [existing.provider, provider] },
      });
    }
    this.services.set(name, { provider, ready: false });
  }

  remove(provider: string): void {
    for (const [name, s] of this.services) if (s.provider === provider) this.services.delete(name);
  }

  scopeFor(plugin: string, required: string[], optional: string[]): PluginServices {
    const lookup = <T>(token: ServiceToken<T>, must: boolean): T | undefined => {
      const entry = this.services.get(token.name);
      if (!entry) {
        if (must) throw new LookoutError('service_not_declared', `plugin "${plugin}" asked for the service "${token.name}", which no loaded plugin provides`, { details: { plugin, service: token.name } });
        return undefined;
      }
      const allowed = entry.provider === plugin || required.includes(entry.provider) || optional.includes(entry.provider);
      if (!allowed) {
        throw new LookoutError('service_not_declared', `plugin "${plugin}" uses the service "${token.name}" of "${entry.provider}" without depending on it`, { details: { plugin, service: token.name, provider: entry.provider } });
      }
      if (!entry.ready) {
        if (must) throw new LookoutError('service_not_declared', `service "${token.name}" of "${entry.provider}" is not provided yet`, { details: { plugin, service: token.name } });
        return undefined;
      }
      return entry.value as T;
    };
    return {
      provide: (token, value) => {
        const entry = this.services.get(token.name);
        if (!entry || entry.provider !== plugin) {
          throw new LookoutError('service_not_declared', `plugin "${plugin}" provided the service "${token.name}" without listing it in provides`, { details: { plugin, service: token.name } });
        }
        entry.value = value;
        entry.ready = true;
        this.root.register(token.name, { useValue: value });
      },
      get: <T>(token: ServiceToken<T>) => lookup(token, true) as T,
      optional: (token) => lookup(token, false),
    };
  }
}
