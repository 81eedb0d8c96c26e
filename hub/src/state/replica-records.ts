import type { Logger } from 'lookout/core';

/** A record's fields in a stream entry: its channel, its JSON and its writer's stable id (the entry's `o` and `n` are its writer's run and number). */
export const RECORD_CHANNEL_FIELD = 'r';
export const RECORD_VALUE_FIELD = 'v';
export const RECORD_WRITER_FIELD = 'w';
/** Records kept while Redis is down (a plugin's flush every few seconds: minutes of them). */
const MAX_UNSENT_RECORDS = 256;

export interface ReplicaRecordsOptions {
  logger: Logger;
  /** Appends one stream entry of these fields (the relay's XADD). */
  append(fields: string[]): Promise<unknown>;
}

/**
 * Records hub plugins share with the other replicas through the ingest stream (IngestRelay
 * `publishRecord`): in the stream's order with the devices' messages, kept for its retention, and
 * read again by a replica restarted from its saved cache like the messages after its point. What a
 * replica that divides the apply derives from the devices it owns (the fleet history's minute rows)
 * reaches the others this way. A writer never hears its own records, before a restart either.
 */
export class ReplicaRecords {
  private readonly listeners = new Map<string, Set<(value: unknown) => void>>();
  /** Records that could not be written, each its stream entry's fields. */
  private unsent: string[][] = [];
  /** Records dropped from `unsent` past its bound. */
  lost = 0;

  constructor(private readonly o: ReplicaRecordsOptions) {}

  /**
   * Writes a record (`entry`: the writer's fields beside channel and value). One that cannot be
   * written (Redis down) is kept, in order, for `writeUnsent`: up to MAX_UNSENT_RECORDS, past which
   * the oldest are lost (a copy of one that did land is skipped by its number).
   */
  publish(channel: string, value: unknown, entry: string[]): void {
    this.write([RECORD_CHANNEL_FIELD, channel, RECORD_VALUE_FIELD, JSON.stringify(value), ...entry]);
  }

  /** Redis is back: the records kept meanwhile. */
  writeUnsent(): void {
    for (const fields of this.unsent.splice(0)) this.write(fields);
  }

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
      this.o.logger.error({ err: (err as Error).message, channel }, 'ingest relay: a replica record that is not JSON was skipped');
      return;
    }
    for (const listener of listeners) {
      try {
        listener(value);
      } catch (err) {
        this.o.logger.error({ err, channel }, 'ingest relay: a replica record listener failed');
      }
    }
  }

  private write(fields: string[]): void {
    this.o.append(fields).catch((err: Error) => {
      if (this.unsent.length === 0) this.o.logger.warn({ err: err.message }, 'ingest relay: records for the other replicas are kept until Redis returns');
      if (this.unsent.length >= MAX_UNSENT_RECORDS) {
        this.unsent.shift();
        this.lost++;
      }
      this.unsent.push(fields);
    });
  }
}
