import { LookoutError } from '../errors/lookout-error.js';
import { routeErrorCode } from '../errors/route-errors.js';
import type { HttpMethod, RouteDecl } from '../plugin/manifest.js';
import type { RouteHandler } from '../plugin/context.js';

/** A declared route, the plugin that declared it, and its handler once registered. */
export interface RouteEntry {
  plugin: string;
  decl: RouteDecl;
  handler?: RouteHandler;
}

const keyOf = (method: HttpMethod, path: string) => `${method} ${path}`;

/** Routes declared by hub plugins; the hub composes its Koa app from `list()` only. */
export class RouteRegistry {
  private readonly entries = new Map<string, RouteEntry>();

  declare(plugin: string, decl: RouteDecl): void {
    const key = keyOf(decl.method, decl.path);
    const existing = this.entries.get(key);
    if (existing) {
      throw new LookoutError('plugin_conflict', `plugins "${existing.plugin}" and "${plugin}" both declare the route ${key}`, {
        details: { kind: 'route', name: key, plugins: [existing.plugin, plugin] },
      });
    }
    // A code the table does not know would be documented with no status: refused at load.
    const unknown = (decl.errors ?? []).filter((code) => routeErrorCode(plugin, code) === undefined);
    if (unknown.length > 0) {
      throw new LookoutError(
        'plugin_manifest_invalid',
        `plugin "${plugin}": the route ${key} declares error codes the table does not have: ${unknown.join(', ')}`,
        {
          details: { plugin, route: key, codes: unknown },
        },
      );
    }
    this.entries.set(key, { plugin, decl });
  }

  handle(plugin: string, method: HttpMethod, path: string, handler: RouteHandler): void {
    const entry = this.entries.get(keyOf(method, path));
    if (!entry || entry.plugin !== plugin) {
      throw new LookoutError('route_not_declared', `plugin "${plugin}" handled the route ${keyOf(method, path)} without declaring it`, {
        details: { plugin, route: keyOf(method, path) },
      });
    }
    entry.handler = handler;
  }

  removePlugin(plugin: string): void {
    for (const [key, entry] of this.entries) if (entry.plugin === plugin) this.entries.delete(key);
  }

  /** Routes that have a handler. */
  list(): RouteEntry[] {
    return [...this.entries.values()].filter((e) => e.handler);
  }
}
