import type { AutomationEntry } from 'lookout/core';
import type { HealthyPruneReport } from './prune.js';
import type { PruneTrigger } from './storage-watch.js';

/** Chunk names an automation_log lists at most (a prune of hundreds says how many, not each). */
const MAX_NAMES = 20;

/**
 * The automation_log entry of one prune (the status plugin publishes it on events/automation_log):
 * what went, what it freed, and whether the volume is still CRITICAL.
 */
export function pruneLogEntry(report: HealthyPruneReport, trigger: PruneTrigger): AutomationEntry {
  const why = trigger === 'storage_critical' ? 'storage CRITICAL' : 'asked (prune_recordings)';
  return {
    action: 'prune',
    plugin: 'recorder',
    trigger,
    outcome: report.still_critical ? 'partial' : 'ok',
    message: `pruned ${report.removed.length} chunks (${report.freed_bytes} bytes), ${why}${report.still_critical ? '; the volume is still CRITICAL: the recordings are not what fills it' : ''}`,
    details: {
      removed_count: report.removed.length,
      removed: report.removed.slice(0, MAX_NAMES).map((r) => r.name),
      freed_bytes: report.freed_bytes,
      kept_chunks: report.kept_chunks,
      still_critical: report.still_critical,
      stopped_because: report.stopped_because,
    },
  };
}
