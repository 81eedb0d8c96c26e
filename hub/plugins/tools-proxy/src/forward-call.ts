import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { LookoutError, toLookoutError, toolOutcomeOf } from 'lookout/core';
import type { HubMetricsPort } from 'lookout/hub';
import type { DebugRing } from '../../debug-ring/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { DeclaredTools } from './declared-tools.js';
import type { DeviceCallLimiter } from './device-call-limiter.js';
import type { McpClientPool } from './mcp-pool.js';
import { poolTarget } from './device-tls.js';
import { isUnknownTool, outcomeOfMcpError, type ToolOutcome } from './tool-outcome.js';

export interface ForwardDeps {
  pool: McpClientPool;
  limiter: DeviceCallLimiter;
  /** Tool names devices declare; a tool a device answered for is one. */
  declared: DeclaredTools;
  timeoutMs: number;
  metrics?: HubMetricsPort;
  ring: DebugRing;
}

/**
 * One tool call on one registered device. Resolves with the tool's outcome (its own failure is an
 * outcome, answered 200); rejects with tool_not_found (404) when the device has no such tool,
 * device_busy (429) when the device's call slots and queue are full, device_unreachable or
 * device_auth_refused (502), or device_timeout (504). The wait for a slot is bounded by the tool
 * timeout (then device_busy: the call never reached the device), and the call, once sent, has the
 * whole tool timeout of its own: a call queued behind others is not timed out for their time.
 * Every call is timed by tool and outcome and recorded in the debug ring.
 */
export async function forwardCall(
  deps: ForwardDeps,
  device: RegisteredDevice,
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const started = process.hrtime.bigint();
  let outcome = 'ok';
  let release: (() => void) | undefined;
  try {
    release = await deps.limiter.acquire(device.deviceId, deps.timeoutMs, signal);
    let result: ToolOutcome;
    try {
      result = toolOutcomeOf(await deps.pool.call(poolTarget(device), tool, args, { timeoutMs: deps.timeoutMs, signal }));
    } catch (err) {
      if (!(err instanceof McpError)) throw err;
      result = outcomeOfMcpError(err);
    }
    if (isUnknownTool(result)) {
      throw new LookoutError('tool_not_found', `${device.deviceId} has no tool named "${tool}"`, { details: { tool, device_id: device.deviceId } });
    }
    deps.declared.add([tool]);
    outcome = result.status;
    const ms = elapsedMs(started);
    if (result.status === 'error') {
      deps.ring.record({
        kind: 'tool_error',
        device_id: device.deviceId,
        message: `${tool}: ${result.error}`.slice(0, 300),
        details: { tool, ms, ...(result.code ? { code: result.code } : {}) },
      });
    } else {
      deps.ring.record({ kind: 'tool_call', device_id: device.deviceId, message: `${tool} ok`, details: { tool, ms } });
    }
    return result;
  } catch (err) {
    const e = toLookoutError(err);
    outcome = OUTCOME_OF_CODE[e.code] ?? (signal.aborted ? 'cancelled' : 'failed');
    deps.ring.record({
      kind: 'tool_error',
      device_id: device.deviceId,
      message: `${tool}: ${e.message}`.slice(0, 300),
      details: { tool, code: e.code, ms: elapsedMs(started) },
    });
    if (e.code === 'internal')
      throw new LookoutError('device_unreachable', `calling ${tool} on ${device.deviceId} failed: ${e.message}`, { cause: err, details: { tool } });
    throw e;
  } finally {
    release?.();
    deps.metrics?.toolCall(tool, outcome, Number(process.hrtime.bigint() - started) / 1e9);
  }
}

/** Metric outcome of a call that did not come back with the tool's answer. */
const OUTCOME_OF_CODE: Record<string, string> = {
  device_timeout: 'timeout',
  device_unreachable: 'unreachable',
  device_auth_refused: 'unauthorized',
  device_busy: 'busy',
  tool_not_found: 'not_found',
};

function elapsedMs(started: bigint): number {
  return Math.round(Number(process.hrtime.bigint() - started) / 1e6);
}
