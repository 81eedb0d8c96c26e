import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { LookoutError, toLookoutError } from 'lookout/core';
import type { HubMetricsPort } from 'lookout/core';
import type { DebugRing } from '../../debug-ring/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { McpClientPool } from './mcp-pool.js';
import { outcomeOf, outcomeOfMcpError, type ToolOutcome } from './tool-outcome.js';

export interface ForwardDeps {
  pool: McpClientPool;
  timeoutMs: number;
  metrics?: HubMetricsPort;
  ring: DebugRing;
}

/**
 * One tool call on one registered device. Resolves with the tool's outcome (its own failure is an
 * outcome, answered 200); rejects with device_unreachable (502) or device_timeout (504). Every
 * call is timed by tool and outcome and recorded in the debug ring.
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
  try {
    let result: ToolOutcome;
    try {
      result = outcomeOf(await deps.pool.call(device.toolUrl!, tool, args, { timeoutMs: deps.timeoutMs, signal }));
    } catch (err) {
      if (!(err instanceof McpError)) throw err;
      result = outcomeOfMcpError(err);
    }
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
    outcome = e.code === 'device_timeout' ? 'timeout' : e.code === 'device_unreachable' ? 'unreachable' : signal.aborted ? 'cancelled' : 'failed';
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
    deps.metrics?.toolCall(tool, outcome, Number(process.hrtime.bigint() - started) / 1e9);
  }
}

function elapsedMs(started: bigint): number {
  return Math.round(Number(process.hrtime.bigint() - started) / 1e6);
}
