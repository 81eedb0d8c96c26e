import { type StorageHealth } from 'lookout/core';

export interface StorageThresholds {
  /** used_pct at or above which storage is WARNING. */
  warnPct: number;
  /** used_pct at or above which storage is CRITICAL. */
  criticalPct: number;
}

export function storageHealth(usedPct: number, t: StorageThresholds): StorageHealth {
  if (usedPct >= t.criticalPct) return 'CRITICAL';
  if (usedPct >= t.warnPct) return 'WARNING';
  return 'OK';
}
