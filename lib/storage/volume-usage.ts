import { statfs } from 'node:fs/promises';
import type { StorageHealth } from 'lookout/core/contracts';

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

export interface VolumeUsage {
  total_gb: number;
  /** Space available to the device (what `df` shows as available). */
  free_gb: number;
  /** Used share of the volume as `df` computes it: used / (used + available). */
  used_pct: number;
}

const GB = 1024 ** 3;

/** The figures of the volume holding `path` (statfs), as system-health and the recorder both report them. */
export async function volumeUsage(path: string): Promise<VolumeUsage> {
  const fs = await statfs(path);
  const used = (fs.blocks - fs.bfree) * fs.bsize;
  const available = fs.bavail * fs.bsize;
  return {
    total_gb: round((fs.blocks * fs.bsize) / GB, 3),
    free_gb: round(available / GB, 3),
    used_pct: used + available > 0 ? round((used / (used + available)) * 100, 2) : 0,
  };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
