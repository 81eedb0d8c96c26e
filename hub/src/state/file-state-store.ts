import { readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic, type Logger } from 'lookout/core';
import type { HubStateStore, StateKeeper, StateLoad } from '../services/hub-services.js';
import { DEFAULT_SAVE_INTERVAL_MS, StateKeepers } from './state-keepers.js';
import { envelopeJson } from './state-json.js';

/** Bound on one key's file: the owners bound what they save below it; a bigger file is refused, not read. */
export const DEFAULT_STATE_MAX_BYTES = 32 * 1024 * 1024;
const FORMAT = 'lookout-hub-state/1';
const KEY = /^[a-z][a-z0-9-]{0,63}$/;

export interface FileStateStoreOptions {
  /** The folder of the state files: `<data dir>/state`. */
  dir: string;
  logger: Logger;
  maxBytes?: number;
  intervalMs?: number;
}

/**
 * Hub state as one JSON file per key under `<data dir>/state/`, written atomically (temp file,
 * fsync, rename) so that a crash leaves the previous file or the new one. A file that cannot be
 * used (not JSON, truncated, too large, of another shape) is renamed aside to
 * `<key>.json.corrupt-<time>` for a person to look at, and the hub starts without it.
 */
export class FileStateStore implements HubStateStore {
  private readonly keepers: StateKeepers;
  readonly maxBytes: number;

  constructor(private readonly options: FileStateStoreOptions) {
    this.maxBytes = options.maxBytes ?? DEFAULT_STATE_MAX_BYTES;
    this.keepers = new StateKeepers((key, value) => this.save(key, value), options.intervalMs ?? DEFAULT_SAVE_INTERVAL_MS, options.logger);
  }

  pathOf(key: string): string {
    if (!KEY.test(key)) throw new Error(`hub state key "${key}" is not a lower-case name`);
    return join(this.options.dir, `${key}.json`);
  }

  async load<T>(key: string, parse: (raw: unknown) => T): Promise<StateLoad<T>> {
    const path = this.pathOf(key);
    let text: string;
    try {
      const size = (await stat(path)).size;
      if (size > this.maxBytes) return await this.setAside(key, path, `${size} bytes, over the bound of ${this.maxBytes}`);
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      return this.setAside(key, path, `cannot be read: ${(err as Error).message}`);
    }
    try {
      const envelope = JSON.parse(text) as { format?: unknown; key?: unknown; saved_at?: unknown; value?: unknown };
      if (envelope?.format !== FORMAT || envelope.key !== key) throw new Error(`not a ${FORMAT} file of "${key}"`);
      const savedAt = typeof envelope.saved_at === 'string' ? Date.parse(envelope.saved_at) : NaN;
      return { value: parse(envelope.value), ...(Number.isFinite(savedAt) ? { savedAt } : {}) };
    } catch (err) {
      return this.setAside(key, path, (err as Error).message);
    }
  }

  keep(key: string, snapshot: () => unknown): StateKeeper {
    this.pathOf(key);
    return this.keepers.keep(key, snapshot);
  }

  /** Writes what changed since the last save (the hub's stop, after its plugins stopped). */
  close(): Promise<void> {
    return this.keepers.close();
  }

  private async save(key: string, value: unknown): Promise<void> {
    const text = envelopeJson(FORMAT, key, value);
    const bytes = Buffer.byteLength(text);
    // The owners bound their snapshots below this; past it the previous file stays rather than one that could not be loaded.
    if (bytes > this.maxBytes) throw new Error(`hub state "${key}" is ${bytes} bytes, over the bound of ${this.maxBytes}: not saved`);
    await writeFileAtomic(this.pathOf(key), text, 0o600);
  }

  private async setAside(key: string, path: string, why: string): Promise<StateLoad<never>> {
    const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    let where = `set aside as ${aside}`;
    try {
      await rename(path, aside);
    } catch (err) {
      where = `could not be set aside (${(err as Error).message})`;
    }
    const warning = `hub state "${key}" not restored: ${why}; ${where}; starting without it`;
    this.options.logger.warn({ key, path, aside }, warning);
    return { warning };
  }
}
