import type { HubStateStore, StateKeeper, StateLoad } from '../services/hub-services.js';
import { createLogger } from 'lookout/core/host';
import type { Logger } from 'lookout/core';
import { StateKeepers } from './state-keepers.js';
import { snapshotJson } from './state-json.js';

/**
 * Hub state in this process only (tests, a hub asked to forget): the same contract as the file
 * store, values copied through JSON so that a saved value shares nothing with its owner.
 */
export class MemoryStateStore implements HubStateStore {
  private readonly values = new Map<string, { json: string; at: number }>();
  private readonly keepers: StateKeepers;

  constructor(options: { intervalMs?: number; logger?: Logger } = {}) {
    this.keepers = new StateKeepers(
      async (key, value) => {
        this.values.set(key, { json: snapshotJson(value), at: Date.now() });
      },
      options.intervalMs ?? 1000,
      options.logger ?? createLogger({ level: 'silent' }),
    );
  }

  load<T>(key: string, parse: (raw: unknown) => T): Promise<StateLoad<T>> {
    const saved = this.values.get(key);
    if (!saved) return Promise.resolve({});
    try {
      return Promise.resolve({ value: parse(JSON.parse(saved.json)), savedAt: saved.at });
    } catch (err) {
      this.values.delete(key);
      return Promise.resolve({ warning: `hub state "${key}" refused: ${(err as Error).message}` });
    }
  }

  keep(key: string, snapshot: () => unknown): StateKeeper {
    return this.keepers.keep(key, snapshot);
  }

  close(): Promise<void> {
    return this.keepers.close();
  }
}
