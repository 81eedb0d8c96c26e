import { z } from 'zod';
import { HelloMessageSchema, type HelloMessage } from 'lookout/core';

/** The hub state key of the registry's view of hello-announced devices (`<data dir>/state/registry.json`). */
export const REGISTRY_STATE_KEY = 'registry';
/** As many as the registry holds (its hello bound). */
export const REGISTRY_STATE_MAX_DEVICES = 10_000;

/**
 * What a restart must not forget of the registry: the hellos (what each device announced and
 * when). The file's devices are the file's; they are read from it again.
 */
export function parseRegistryState(raw: unknown): { hellos: { hello: HelloMessage; at: number }[] } {
  return z.object({ hellos: z.array(z.object({ hello: HelloMessageSchema, at: z.number().nonnegative() })).max(REGISTRY_STATE_MAX_DEVICES) }).parse(raw);
}
