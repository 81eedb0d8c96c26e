import { z } from 'zod';
import { HelloMessageSchema, type HelloMessage } from 'lookout/core/contracts';
import { MAX_LABEL_BINDINGS } from './label-claims.js';

/** The hub state key of the registry's view of hello-announced devices (`<data dir>/state/registry.json`). */
export const REGISTRY_STATE_KEY = 'registry';
/** As many as the registry holds (its hello bound). */
export const REGISTRY_STATE_MAX_DEVICES = 10_000;

/**
 * What a restart must not forget of the registry: the hellos (what each device announced, when, and
 * where it connected from) and which device holds each label only hellos announce (the first to
 * claim it keeps it across a restart). The file's devices are the file's; they are read from it again.
 */
export function parseRegistryState(raw: unknown): {
  hellos: { hello: HelloMessage; at: number; from?: string }[];
  labels?: { label: string; device_id: string; at: number }[];
} {
  return z
    .object({
      hellos: z
        .array(z.object({ hello: HelloMessageSchema, at: z.number().nonnegative(), from: z.ipv4().or(z.ipv6()).optional() }))
        .max(REGISTRY_STATE_MAX_DEVICES),
      // Absent in a state saved before labels were bound: they are bound again from the hellos.
      labels: z
        .array(z.object({ label: z.string().min(1), device_id: z.string().min(1), at: z.number().nonnegative() }))
        .max(MAX_LABEL_BINDINGS)
        .optional(),
    })
    .parse(raw);
}
