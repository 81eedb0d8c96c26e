import { z } from 'zod';
import type { LoadedRuntime, ToolRegistry } from 'lookout/core/host';
import type { ToolDecl } from 'lookout/core';

/** Tools the device host serves itself, beside its plugins' (owner name in the tool registry). */
export const HOST_TOOL_OWNER = 'lookout-edge';

const RESTART_PLUGIN: ToolDecl = {
  name: 'restart_plugin',
  description:
    'Restarts a failed or skipped plugin of this device, then the plugins skipped because of it; refused while it runs, while a plugin it needs is down, or during the backoff after a failed restart',
  input: z.object({ name: z.string().min(1).max(64).describe('the plugin name, as get_system_health lists it') }),
  output: z.object({ name: z.string(), version: z.string(), state: z.string(), code: z.string().optional(), message: z.string().optional() }).loose(),
};

/** Declared before the plugins load, so that no plugin can claim these names. */
export function declareHostTools(tools: ToolRegistry): void {
  tools.declare(HOST_TOOL_OWNER, RESTART_PLUGIN);
}

export function registerHostTools(tools: ToolRegistry, runtime: LoadedRuntime): void {
  tools.register(HOST_TOOL_OWNER, RESTART_PLUGIN.name, ({ name }: { name: string }) => runtime.restart(name));
}
