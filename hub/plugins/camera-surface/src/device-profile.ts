import { LookoutError } from 'lookout/core';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { DeviceTools } from '../../tools-proxy/src/service.js';
import { ProfileResult } from './profile-schemas.js';

/** A device answered a profile tool with a failure of its own, or with something that is not a profile. */
export const DEVICE_TOOL_FAILED = 'camera-surface.device_tool_failed';

/**
 * One profile tool call on a device, its outcome as the hub's errors: the device refusing the
 * arguments is the client's 400 (tool_arguments_invalid, with the device's message); a device the
 * hub may not contact is target_not_allowed (403); unreachable 502 and timed out 504 come from
 * DEVICE_TOOLS as they are; the tool's own failure (its disk is full) or an answer that is not a
 * profile is camera-surface.device_tool_failed (502) with the device's code.
 */
export async function callProfileTool(
  tools: DeviceTools,
  device: RegisteredDevice,
  tool: 'get_camera_profile' | 'set_camera_profile',
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ProfileResult> {
  if (!device.toolUrl) {
    throw new LookoutError('target_not_allowed', `${device.deviceId} is not contacted: ${device.unreachableReason ?? 'no address'}`, {
      details: { device_id: device.deviceId },
    });
  }
  const outcome = await tools.call(device, tool, args, signal);
  if (outcome.status === 'error') {
    const details = { device_id: device.deviceId, tool, ...(outcome.code ? { device_code: outcome.code } : {}) };
    if (outcome.code === 'tool_arguments_invalid') throw new LookoutError('tool_arguments_invalid', outcome.error, { details });
    throw new LookoutError(DEVICE_TOOL_FAILED, `${tool} failed on ${device.deviceId}: ${outcome.error}`, { details });
  }
  const parsed = ProfileResult.safeParse(outcome.result);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LookoutError(
      DEVICE_TOOL_FAILED,
      `${tool} on ${device.deviceId} answered no camera profile: ${issue?.path.join('.') || 'result'}: ${issue?.message}`,
      {
        details: { device_id: device.deviceId, tool },
      },
    );
  }
  return parsed.data;
}
