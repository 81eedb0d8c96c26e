import { toLookoutError, type Logger, type PluginBus } from 'lookout/core';
import { AutomationLogEventSchema, type AutomationLogEvent } from 'lookout/core/contracts';
import type { HealthyPruneReport } from './prune.js';
import type { PruneTrigger } from './storage-watch.js';

/** Chunk names an automation_log lists at most (a prune of hundreds says how many, not each). */
const MAX_NAMES = 20;

/** The events/automation_log message of one prune: what went, what it freed, and whether the volume is still CRITICAL. */
export function pruneLogMessage(report: HealthyPruneReport, trigger: PruneTrigger, now = new Date()): AutomationLogEvent {
  const outcome = report.still_critical ? 'partial' : 'ok';
  const why = trigger === 'storage_critical' ? 'storage CRITICAL' : 'asked (prune_recordings)';
  return AutomationLogEventSchema.parse({
    timestamp: now.toISOString(),
    type: 'automation_log',
    action: 'prune',
    plugin: 'recorder',
    trigger,
    outcome,
    message: `pruned ${report.removed.length} chunks (${report.freed_bytes} bytes), ${why}${report.still_critical ? '; the volume is still CRITICAL: the recordings are not what fills it' : ''}`,
    details: {
      removed_count: report.removed.length,
      removed: report.removed.slice(0, MAX_NAMES).map((r) => r.name),
      freed_bytes: report.freed_bytes,
      kept_chunks: report.kept_chunks,
      still_critical: report.still_critical,
      stopped_because: report.stopped_because,
    },
  });
}

/** Publishes a prune's automation_log; a bus that is down loses it (logged), never the prune. */
export function publishPruneLog(bus: PluginBus, report: HealthyPruneReport, trigger: PruneTrigger, log: Logger): void {
  bus.publish('events/automation_log', pruneLogMessage(report, trigger)).catch((err: unknown) => {
    log.warn({ code: toLookoutError(err).code }, 'automation_log of a prune not published');
  });
}
