import { type Logger, toLookoutError } from 'lookout/core';
import type { StorageThresholds } from 'lookout/lib/storage';
import type { ChunkIndex } from './chunk-index.js';
import { writeManifest } from './manifest-file.js';
import { pruneUntilHealthy, type HealthyPruneReport } from './prune.js';
import { freeBytes, measureStorage, type StorageState } from './storage.js';

export interface StorageWatchOptions {
  dir: string;
  thresholds: StorageThresholds;
  /** AUTO_PRUNE: prune at CRITICAL. */
  autoPrune: boolean;
  keepChunks: number;
  manifestEntries: number;
  index: ChunkIndex;
  log: Logger;
  /** Told of every prune this watch ran (the automatic one at CRITICAL, or one asked for): the plugin publishes it as automation_log. */
  onPrune?: (report: HealthyPruneReport, trigger: PruneTrigger) => void;
}

/** Why a prune ran: the watch found the volume CRITICAL (AUTO_PRUNE), or someone asked (prune_recordings, the hub's remediation). */
export type PruneTrigger = 'storage_critical' | 'requested';

/**
 * Storage and retention of the recordings volume: its last measure (or why it could not be measured)
 * and the automatic prune at CRITICAL (prune.ts), which keeps the index and the manifest in step.
 */
export class StorageWatch {
  state: StorageState | null = null;
  /** Why the last measure failed (null when it worked). */
  error: string | null = null;
  /** Chunks left by the last automatic prune that could not bring the volume out of CRITICAL (null once it is out). */
  prunedToChunks: number | null = null;

  constructor(private readonly o: StorageWatchOptions) {}

  async measure(): Promise<StorageState | null> {
    try {
      this.state = await measureStorage(this.o.dir, this.o.thresholds);
      this.error = null;
    } catch (err) {
      this.state = null;
      this.error = (err as Error).message;
    }
    return this.state;
  }

  /** Measures (after a prune or a removal from outside), prunes at CRITICAL when configured to. */
  async check(): Promise<void> {
    await this.o.index.refresh().catch(() => undefined); // follows a prune or a removal from outside
    const s = await this.measure();
    if (s?.health === 'CRITICAL' && this.o.autoPrune) await this.pruneAtCritical();
    if (this.state?.health !== 'CRITICAL') this.prunedToChunks = null;
  }

  /**
   * The prune at CRITICAL, asked for (the prune_recordings tool): runs whatever AUTO_PRUNE says, and
   * on a volume that is not CRITICAL only down to `keep`. Answers its report and the health after it.
   */
  async pruneNow(): Promise<HealthyPruneReport & { storage_health: string | null }> {
    await this.o.index.refresh().catch(() => undefined);
    const report = await this.prune('requested');
    if (this.state?.health !== 'CRITICAL') this.prunedToChunks = null;
    return { ...report, storage_health: this.state?.health ?? null };
  }

  private async pruneAtCritical(): Promise<void> {
    try {
      await this.prune('storage_critical');
    } catch (err) {
      this.o.log.error({ code: toLookoutError(err).code }, `prune at CRITICAL failed: ${(err as Error).message}`);
    }
  }

  private async prune(trigger: PruneTrigger): Promise<HealthyPruneReport> {
    const { dir, index, log } = this.o;
    const pruned = await pruneUntilHealthy(dir, this.o.keepChunks, async () => ({
      critical: (await this.measure())?.health === 'CRITICAL',
      freeBytes: await freeBytes(dir),
    }));
    await index.refresh();
    this.prunedToChunks = pruned.still_critical ? index.size : null;
    await writeManifest(dir, index.all(), this.o.manifestEntries);
    log.warn(
      { trigger, removed: pruned.removed.length, freed_bytes: pruned.freed_bytes, storage_health: this.state?.health, used_pct: this.state?.used_pct },
      pruned.still_critical ? `storage CRITICAL after pruning to ${index.size} chunks: the recordings are not what fills the disk` : 'pruned recordings',
    );
    this.o.onPrune?.(pruned, trigger);
    return pruned;
  }
}
