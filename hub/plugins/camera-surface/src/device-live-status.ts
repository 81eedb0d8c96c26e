import { toLookoutError } from 'lookout/core';
import { LiveStatusResultSchema, type LiveStatusResult } from '../../../../plugins/rtsp/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { DeviceTools } from '../../tools-proxy/src/service.js';
import { DEVICE_TOOL_FAILED } from './device-profile.js';

export { LiveStatusResultSchema, type LiveStatusResult };

/** Loose: a device newer than this hub may report fields of its own; they pass through. */
export const DeviceLiveStatusResult = LiveStatusResultSchema.loose();

/** The device's get_live_status answer, or why there is none (the device's code, the hub's message). */
export type LiveStatusOutcome = { ok: true; r: LiveStatusResult } | { ok: false; code: string; reason: string };

/**
 * get_live_status on a device (its rtsp plugin: viewers, sessions, the newest keyframe, the encoder's
 * real size and rate). Never rejects: a device without the tool (no rtsp plugin, or older than it),
 * one the hub may not contact, one that is down or answers something else is the reason instead.
 */
export async function callLiveStatusTool(tools: DeviceTools, device: RegisteredDevice, signal: AbortSignal): Promise<LiveStatusOutcome> {
  if (!device.toolUrl) {
    return { ok: false, code: 'target_not_allowed', reason: `${device.deviceId} is not contacted: ${device.unreachableReason ?? 'no address'}` };
  }
  const noTool = `${device.deviceId} has no get_live_status tool (no rtsp plugin in its image): viewers and keyframes are not reported`;
  try {
    const outcome = await tools.call(device, 'get_live_status', {}, signal);
    if (outcome.status === 'error') {
      if (outcome.code === 'tool_unknown') return { ok: false, code: 'tool_not_found', reason: noTool };
      return { ok: false, code: outcome.code ?? DEVICE_TOOL_FAILED, reason: `get_live_status failed on ${device.deviceId}: ${outcome.error}` };
    }
    const parsed = DeviceLiveStatusResult.safeParse(outcome.result);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.join('.') || 'result';
      return { ok: false, code: DEVICE_TOOL_FAILED, reason: `get_live_status on ${device.deviceId} answered no live status: ${where}: ${issue?.message}` };
    }
    return { ok: true, r: parsed.data };
  } catch (err) {
    const e = toLookoutError(err);
    if (e.code === 'tool_not_found') return { ok: false, code: e.code, reason: noTool };
    return { ok: false, code: e.code, reason: `get_live_status on ${device.deviceId}: ${e.code}: ${e.message}` };
  }
}
