import type { PluginHealth } from 'lookout/core';
import type { StorageState } from './storage.js';

/**
 * The plugin's health follows the recordings volume: ok at OK and WARNING, degraded at CRITICAL or
 * when it cannot be measured. Set only on a change, so a steady state is not re-announced each check.
 */
export class StorageHealthReport {
  private last: string | undefined;

  constructor(
    private readonly health: Pick<PluginHealth, 'set'>,
    private readonly dir: string,
  ) {}

  update(storage: StorageState | null, error: string | null): void {
    const health = storage?.health ?? 'unmeasured';
    if (health === this.last) return;
    this.last = health;
    if (health === 'OK' || health === 'WARNING') this.health.set('ok');
    else
      this.health.set(
        'degraded',
        storage ? `storage ${health}: ${storage.used_pct}% of ${this.dir} used` : `storage of ${this.dir} cannot be measured: ${error}`,
      );
  }
}
