import { z } from 'zod';
import { LookoutError, toLookoutError } from '../errors/lookout-error.js';
import type { ToolDecl } from '../plugin/manifest.js';
import type { ToolHandler } from '../plugin/context.js';

export interface ToolEntry {
  plugin: string;
  decl: ToolDecl;
  handler?: ToolHandler;
}

/**
 * All tools of a runtime. Plugins declare tools in their manifests and register handlers at start;
 * the tool server, the one-shot `--tool` mode and tests call them through `call`, which checks the
 * arguments against the declared schema first.
 */
export class ToolRegistry {
  private readonly entries = new Map<string, ToolEntry>();
  /** Tools of plugins the image carries but the active layer leaves off, with why. */
  private readonly disabled = new Map<string, { plugin: string; reason: string }>();

  declare(plugin: string, decl: ToolDecl): void {
    const existing = this.entries.get(decl.name);
    if (existing) {
      throw new LookoutError('plugin_conflict', `plugins "${existing.plugin}" and "${plugin}" both declare the tool "${decl.name}"`, {
        details: { kind: 'tool', name: decl.name, plugins: [existing.plugin, plugin] },
      });
    }
    this.entries.set(decl.name, { plugin, decl });
  }

  /**
   * A tool of a plugin the image carries but the active layer leaves off: calling it says so,
   * rather than that no such tool exists. A tool a running plugin declares wins over it.
   */
  declareDisabled(plugin: string, name: string, reason: string): void {
    if (!this.entries.has(name)) this.disabled.set(name, { plugin, reason });
  }

  register(plugin: string, name: string, handler: ToolHandler): void {
    const entry = this.entries.get(name);
    if (!entry || entry.plugin !== plugin) {
      throw new LookoutError('tool_not_declared', `plugin "${plugin}" registered the tool "${name}" without declaring it`, {
        details: { plugin, tool: name },
      });
    }
    entry.handler = handler;
  }

  /** Forget every tool of a plugin (at its stop). */
  removePlugin(plugin: string): void {
    for (const [name, entry] of this.entries) if (entry.plugin === plugin) this.entries.delete(name);
  }

  /** Tools that have a handler, in declaration order. */
  list(): ToolEntry[] {
    return [...this.entries.values()].filter((e) => e.handler);
  }

  get(name: string): ToolEntry | undefined {
    const entry = this.entries.get(name);
    return entry?.handler ? entry : undefined;
  }

  async call(name: string, args: unknown, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    const entry = this.get(name);
    const off = entry ? undefined : this.disabled.get(name);
    if (off && !this.entries.has(name)) {
      throw new LookoutError('tool_disabled_at_layer', `the tool "${name}" is disabled at this layer: its plugin "${off.plugin}" is ${off.reason}`, {
        details: { tool: name, plugin: off.plugin, reason: off.reason },
      });
    }
    if (!entry?.handler) {
      throw new LookoutError('tool_unknown', `no tool named "${name}"`, { details: { tool: name, known: this.list().map((e) => e.decl.name) } });
    }
    const parsed = entry.decl.input.safeParse(args ?? {});
    if (!parsed.success) {
      throw new LookoutError('tool_arguments_invalid', `invalid arguments for "${name}": ${z.prettifyError(parsed.error)}`, {
        details: { tool: name, issues: parsed.error.issues },
      });
    }
    let result: unknown;
    try {
      result = await entry.handler(parsed.data, { signal: options.signal ?? new AbortController().signal });
    } catch (err) {
      const lookout = toLookoutError(err);
      if (lookout.code !== 'internal') throw lookout;
      throw new LookoutError('tool_failed', `tool "${name}" failed: ${lookout.message}`, { cause: err, details: { tool: name } });
    }
    checkOutput(entry, result);
    return result;
  }
}

/**
 * The device answers only what the tool declares: a result of another shape is the plugin's bug,
 * reported as tool_output_invalid naming the first wrong field, never passed on for each client to
 * trip over. The result goes out as the handler gave it (the parse's copy is not used), so a check
 * that passes changes no byte of the answer.
 */
function checkOutput(entry: ToolEntry, result: unknown): void {
  const output = entry.decl.output;
  if (!output) return;
  const checked = output.safeParse(result === undefined ? null : result);
  if (checked.success) return;
  const name = entry.decl.name;
  const first = checked.error.issues[0];
  const field = first && first.path.length > 0 ? first.path.join('.') : '(the result)';
  throw new LookoutError(
    'tool_output_invalid',
    `tool "${name}" of plugin "${entry.plugin}" answered a result its output schema refuses, at ${field}: ${z.prettifyError(checked.error)}`,
    { details: { tool: name, plugin: entry.plugin, field, issues: checked.error.issues } },
  );
}
