import type { DeviceReadiness, ReadinessGrades } from '../../readiness/src/service.js';
import type { PlannedAction } from './remedy-plan.js';
import type { ActionOutcome } from './run-remedies.js';

/** Between two gradings of a device whose remedied module is still not_ready. */
const REGRADE_EVERY_MS = 1000;

/**
 * Grades the remedied devices again. A device where a remedy that ran (`done`) left its module
 * not_ready is graded again every second within `settleMs`: what a remedy fixes can take a moment to
 * show (after a prune the recorder writes again at its next picture; after a restart the plugin's
 * first health). What is still not_ready then is answered so.
 */
export async function regradeSettled(
  plans: readonly { id: string; actions: readonly PlannedAction[] }[],
  outcomes: ReadonlyMap<string, readonly ActionOutcome[]>,
  readiness: Pick<ReadinessGrades, 'validate'>,
  settleMs: number,
  signal: AbortSignal,
): Promise<Map<string, DeviceReadiness>> {
  const after = new Map<string, DeviceReadiness>();
  const deadline = Date.now() + settleMs;
  let pending = plans;
  for (;;) {
    for (const g of await readiness.validate(
      pending.map((p) => p.id),
      signal,
    ))
      after.set(g.device_id, g);
    pending = pending.filter((p) =>
      p.actions.some((a, i) => outcomes.get(p.id)?.[i]?.status === 'done' && after.get(p.id)?.modules[a.module].grade === 'not_ready'),
    );
    if (pending.length === 0 || signal.aborted || Date.now() + REGRADE_EVERY_MS > deadline) return after;
    await new Promise((r) => setTimeout(r, REGRADE_EVERY_MS));
  }
}
