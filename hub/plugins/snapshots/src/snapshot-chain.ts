import { LookoutError, toLookoutError } from 'lookout/core';
import type { DebugRing } from '../../debug-ring/src/service.js';
import { StepError } from './tool-step.js';
import type { Snapshot, SnapshotRequest, SnapshotSource, StepFailure } from './snapshot-types.js';

export type SnapshotStep = { source: SnapshotSource; run: (req: SnapshotRequest) => Promise<Snapshot> };

/** Ring kinds of a failing step (spec 01, "Debug event ring"). */
const RING_KIND: Record<SnapshotSource, 'snapshot_fail' | 'ssh_jpeg_fail'> = { tool: 'snapshot_fail', live_tail: 'snapshot_fail', ssh: 'ssh_jpeg_fail' };

/**
 * Runs the steps in order until one gives a JPEG. Each failure goes to the ring; when all fail the
 * answer is the spec's 503 `live_jpeg_unavailable_mcp_and_ssh_failed`, every step's failure in its
 * details. A request the client gave up stops the chain (and nothing more is recorded).
 */
export async function runChain(steps: readonly SnapshotStep[], req: SnapshotRequest, ring: DebugRing): Promise<Snapshot> {
  const failures: StepFailure[] = [];
  for (const step of steps) {
    if (req.signal.aborted) break;
    const started = Date.now();
    try {
      return await step.run(req);
    } catch (err) {
      if (req.signal.aborted) break;
      const failure = { step: step.source, ...failureOf(err) };
      failures.push(failure);
      ring.record({
        kind: RING_KIND[step.source],
        device_id: req.device.deviceId,
        message: `snapshot of ${req.device.deviceId} by ${step.source} failed: ${failure.message}`,
        details: { step: step.source, code: failure.code, ms: Date.now() - started },
      });
    }
  }
  const summary = failures.map((f) => `${f.step}: ${f.message}`).join('; ');
  throw new LookoutError('live_jpeg_unavailable_mcp_and_ssh_failed', `no snapshot of ${req.device.deviceId}: ${summary || 'the request was cancelled'}`, {
    details: { device_id: req.device.deviceId, steps: failures },
  });
}

export function failureOf(err: unknown): { code: string; message: string } {
  if (err instanceof StepError) return { code: err.code, message: err.message };
  const e = toLookoutError(err);
  return { code: e.code, message: e.message };
}
