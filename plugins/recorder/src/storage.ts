import { statfs } from 'node:fs/promises';
import { storageHealth, volumeUsage, type StorageThresholds } from 'lookout/lib/storage';
import type { StorageHealth } from 'lookout/core/contracts';

export interface StorageState {
  health: StorageHealth;
  free_gb: number;
  total_gb: number;
  /** used / (used + available), as `df` computes it (system-health reports the same figure). */
  used_pct: number;
}

/** storage_health of the recordings filesystem, with the figures and thresholds system-health uses. */
export async function measureStorage(dir: string, t: StorageThresholds): Promise<StorageState> {
  const usage = await volumeUsage(dir);
  return { health: storageHealth(usage.used_pct, t), ...usage };
}

/** Bytes available to the recorder on the recordings filesystem, unrounded (what a removal is measured by). */
export async function freeBytes(dir: string): Promise<number> {
  const fs = await statfs(dir);
  return fs.bavail * fs.bsize;
}
