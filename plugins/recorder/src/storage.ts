import { statfs } from 'node:fs/promises';
import type { StorageHealth } from 'lookout/core';

export interface StorageState {
  health: StorageHealth;
  free_gb: number;
  total_gb: number;
  /** used / (used + available), as `df` computes it (system-health reports the same figure). */
  used_pct: number;
}

export interface StorageThresholds {
  warnPct: number;
  criticalPct: number;
}

const GB = 1024 ** 3;

/**
 * storage_health of the recordings filesystem. The same figures and thresholds as system-health
 * (plugins/system-health/src/storage-usage.ts, storage-health.ts), kept here because a plugin may not
 * import another's internals; both belong in core once a third user appears.
 */
export async function measureStorage(dir: string, t: StorageThresholds): Promise<StorageState> {
  const fs = await statfs(dir);
  const used = (fs.blocks - fs.bfree) * fs.bsize;
  const available = fs.bavail * fs.bsize;
  const usedPct = used + available > 0 ? Math.round((used / (used + available)) * 10_000) / 100 : 0;
  return {
    health: usedPct >= t.criticalPct ? 'CRITICAL' : usedPct >= t.warnPct ? 'WARNING' : 'OK',
    free_gb: Math.round((available / GB) * 1000) / 1000,
    total_gb: Math.round(((fs.blocks * fs.bsize) / GB) * 1000) / 1000,
    used_pct: usedPct,
  };
}
