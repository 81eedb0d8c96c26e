import { z } from 'zod';
import type { SavedEvent } from './debug-ring.js';

/** The hub state key of the ring's tail (`<data dir>/state/debug-ring.json`). */
export const RING_STATE_KEY = 'debug-ring';
/** A restart keeps the newest failures, presence changes and registry events: this many, in this many bytes. */
export const RING_STATE_MAX_EVENTS = 500;
export const RING_STATE_MAX_BYTES = 2 * 1024 * 1024;

const SavedEventSchema = z.object({
  kind: z.string().min(1).max(128),
  message: z.string().max(4096),
  device_id: z.string().max(256).optional(),
  topic: z.string().max(1024).optional(),
  // The details' JSON text, as the ring holds it: checked to be JSON, since the ring parses it when read.
  details: z
    .string()
    .max(128 * 1024)
    .refine((t) => isJson(t), 'not JSON text')
    .optional(),
  ms: z.number().nonnegative(),
});

export function parseRingState(raw: unknown): { events: SavedEvent[] } {
  const parsed = z.object({ events: z.array(SavedEventSchema).max(RING_STATE_MAX_EVENTS) }).parse(raw);
  return { events: parsed.events.map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) as unknown as SavedEvent) };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
