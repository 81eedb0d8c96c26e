import { ERROR_CODES, type ErrorCode } from './codes.js';
import type { PluginErrorDecl } from '../plugin/manifest.js';

/** A plugin's own code, namespaced by its name: `hello.greeting_refused`. */
export type PluginErrorCode = `${string}.${string}`;
/** A core code or a plugin's namespaced one. */
export type AnyErrorCode = ErrorCode | PluginErrorCode;

/** One row of the error table: a code with its HTTP status and message. */
export interface ErrorTableEntry {
  code: AnyErrorCode;
  status: number;
  message: string;
  /** The plugin that declared it; absent for the core's codes. */
  plugin?: string;
}

// Process-wide: codes are namespaced by plugin name, so runtimes sharing a process (tests) agree.
const pluginCodes = new Map<string, ErrorTableEntry>();

/** Adds a plugin's declared codes to the table (at load, before it starts). */
export function registerPluginErrors(plugin: string, decls: PluginErrorDecl[]): void {
  for (const d of decls) {
    const code: PluginErrorCode = `${plugin}.${d.code}`;
    pluginCodes.set(code, { code, status: d.status, message: d.description, plugin });
  }
}

/** Looks a code up in the core table, then among the plugins' declared codes; undefined when unknown. */
export function errorInfo(code: string): ErrorTableEntry | undefined {
  if (Object.hasOwn(ERROR_CODES, code)) return { code: code as ErrorCode, ...ERROR_CODES[code as ErrorCode] };
  return pluginCodes.get(code);
}

export function isDeclaredErrorCode(code: string): boolean {
  return errorInfo(code) !== undefined;
}

/** Every code: the core's, then those plugins declared (optionally only the given plugins'). */
export function errorTable(plugins?: Iterable<string>): ErrorTableEntry[] {
  const only = plugins ? new Set(plugins) : undefined;
  const core = Object.entries(ERROR_CODES).map(([code, e]) => ({ code: code as ErrorCode, status: e.status, message: e.message }));
  const own = [...pluginCodes.values()].filter((e) => !only || only.has(e.plugin!));
  return [...core, ...own.sort((a, b) => a.code.localeCompare(b.code))];
}
