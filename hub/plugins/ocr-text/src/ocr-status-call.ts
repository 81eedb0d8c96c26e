import { toLookoutError } from 'lookout/core';
import { OcrStatusSchema, type OcrStatus } from '../../../../plugins/trocr/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { DeviceTools } from '../../tools-proxy/src/service.js';

/** Loose: a device newer than this hub may report fields of its own. */
const DeviceOcrStatus = OcrStatusSchema.loose();

export type OcrStatusOutcome = { ok: true; status: OcrStatus } | { ok: false; code: string; reason: string };

/**
 * get_ocr_status on a device (its trocr plugin). Never rejects: a device without the tool (no trocr
 * plugin in its image), one the hub may not contact, one that is down or answers something else
 * is the reason instead, and the route still shows the reads the bus brought.
 */
export async function callOcrStatus(tools: DeviceTools, device: RegisteredDevice, signal: AbortSignal): Promise<OcrStatusOutcome> {
  if (!device.toolUrl)
    return { ok: false, code: 'target_not_allowed', reason: `${device.deviceId} is not contacted: ${device.unreachableReason ?? 'no address'}` };
  const noTool = `${device.deviceId} has no get_ocr_status tool (no trocr plugin in its image)`;
  try {
    const outcome = await tools.call(device, 'get_ocr_status', {}, signal);
    if (outcome.status === 'error') {
      if (outcome.code === 'tool_unknown') return { ok: false, code: 'tool_not_found', reason: noTool };
      return { ok: false, code: outcome.code ?? 'tool_failed', reason: `get_ocr_status failed on ${device.deviceId}: ${outcome.error}` };
    }
    const parsed = DeviceOcrStatus.safeParse(outcome.result);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        ok: false,
        code: 'tool_failed',
        reason: `get_ocr_status on ${device.deviceId} answered no OCR status: ${issue?.path.join('.') || 'result'}: ${issue?.message}`,
      };
    }
    return { ok: true, status: parsed.data };
  } catch (err) {
    const e = toLookoutError(err);
    if (e.code === 'tool_not_found') return { ok: false, code: e.code, reason: noTool };
    return { ok: false, code: e.code, reason: `get_ocr_status on ${device.deviceId}: ${e.code}: ${e.message}` };
  }
}
