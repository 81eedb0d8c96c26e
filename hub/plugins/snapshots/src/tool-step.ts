import { LiveJpegResultSchema } from 'lookout/core/contracts';
import type { DeviceTools } from '../../tools-proxy/src/service.js';
import { isJpeg, type Snapshot, type SnapshotRequest } from './snapshot-types.js';

/** Step 1: the device's own `get_live_jpeg` tool, through the hub's tool client (its limits and timeouts). */
export async function snapshotFromTool(tools: DeviceTools, req: SnapshotRequest, timeoutMs: number): Promise<Snapshot> {
  if (!req.device.toolUrl)
    throw new StepError('target_not_allowed', `${req.device.deviceId} is not contacted: ${req.device.unreachableReason ?? 'no address'}`);
  const signal = AbortSignal.any([req.signal, AbortSignal.timeout(timeoutMs)]);
  const outcome = await tools.call(req.device, 'get_live_jpeg', { w: req.width, q: req.quality }, signal);
  if (outcome.status === 'error') throw new StepError(outcome.code ?? 'tool_failed', outcome.error);
  const parsed = LiveJpegResultSchema.safeParse(outcome.result);
  if (!parsed.success) throw new StepError('tool_result_invalid', `get_live_jpeg answered no JPEG result: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const jpeg = Buffer.from(parsed.data.jpeg_base64, 'base64');
  if (!isJpeg(jpeg)) throw new StepError('tool_result_invalid', 'get_live_jpeg answered bytes that are not a JPEG');
  return { jpeg, source: 'tool', capturedAt: parsed.data.captured_at };
}

/**
 * A step's failure whose code is not one of the hub's (a device tool's own code): it is only listed
 * in the 503's details, never thrown to the client, so it need not be in the error table.
 */
export class StepError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
