import type { Logger } from 'lookout/core';

/** A record's fields in a stream entry: its channel, its JSON and its writer's stable id (the entry's `o` and `n` are its writer's run and number). */
export const RECORD_CHANNEL_FIELD = 'r';
export const RECORD_VALUE_FIELD = 'v';
export const RECORD_WRITER_FIELD = 'w';

/**
 * Records hub plugins share with the other replicas through the ingest stream (IngestRelay
 * `publishRecord`): in the stream's order with the devices' messages, kept for its retention, and
 * read again by a replica restarted from its saved cache like the messages after its point. What a
 * replica that divides the apply derives from the devices it owns (the fleet history's minute rows)
 * reaches the others this way. A writer never hears its own records, before a restart either.
 */
export class ReplicaRecords {
  private readonly listeners = new Map<string, Set<(value: unknown) => void>>();

  constructor(private readonly logger: Logger) {}

  on(channel: string, listener: (value: unknown) => void): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** A record read from the stream: parsed only when someone listens to its channel. */
  deliver(channel: string, json: Buffer): void {
    const listeners = this.listeners.get(channel);
    if (!listeners || listeners.size === 0) return;
    let value: unknown;
    try {
      value = JSON.parse(json.toString());
    } catch (err) {
      this.logger.error({ err: (err as Error).message, channel }, 'ingest relay: a replica record that is not JSON was skipped');
      return;
    }
    for (const listener of listeners) {
      try {
        listener(value);
      } catch (err) {
        this.logger.error({ err, channel }, 'ingest relay: a replica record listener failed');
      }
    }
  }
}
