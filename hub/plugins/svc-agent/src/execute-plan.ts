import { toLookoutError } from 'lookout/core';
import type { DebugRing } from '../../debug-ring/src/service.js';
import type { DeviceRegistry, RegisteredDevice } from '../../registry/src/service.js';
import type { DeviceTools, ListedTool } from '../../tools-proxy/src/service.js';
import type { PlanStep, StepReport } from './plan.js';
import { refusal } from './policy.js';

export interface ExecuteDeps {
  registry: DeviceRegistry;
  tools: DeviceTools;
  ring: DebugRing;
}

export interface ExecuteRequest {
  steps: PlanStep[];
  approved: boolean;
  dryRun: boolean;
  callerMay: boolean;
  agent: string | undefined;
}

interface Checked {
  step: PlanStep;
  index: number;
  device: RegisteredDevice;
  readOnly: boolean;
  refused: string | null;
}

/**
 * Runs a plan under the policy: every step is checked first (its device resolved, its tool found
 * in the device's tools/list with its readOnlyHint); a refused step means nothing runs, so a plan
 * never stops half way because of the policy. Each step that runs is recorded in the debug ring.
 */
export async function executePlan(req: ExecuteRequest, deps: ExecuteDeps, signal: AbortSignal): Promise<{ refused: boolean; steps: StepReport[] }> {
  const listed = new Map<string, Promise<ListedTool[]>>();
  const checked: Checked[] = [];
  for (const [index, step] of req.steps.entries()) {
    const device = deps.registry.resolve(step.device);
    if (!listed.has(device.deviceId)) listed.set(device.deviceId, deps.tools.listTools(device, signal));
    const tool = (await listed.get(device.deviceId)!).find((t) => t.name === step.tool);
    // A tool the device does not list is refused here rather than called: its hints are unknown.
    const readOnly = tool?.annotations?.readOnlyHint === true;
    const refused = tool ? refusal(readOnly, req.approved, req.callerMay) : `the device lists no tool ${step.tool}`;
    checked.push({ step, index, device, readOnly, refused });
  }
  const anyRefused = checked.some((c) => c.refused !== null);
  const base = (c: Checked): StepReport => ({
    index: c.index,
    device_id: c.device.deviceId,
    tool: c.step.tool,
    read_only: c.readOnly,
    decision: c.refused ? 'refused' : req.dryRun ? 'would_run' : 'run',
    reason: c.refused,
    status: null,
    error: null,
  });
  if (req.dryRun || anyRefused) {
    if (anyRefused && !req.dryRun) {
      for (const c of checked.filter((x) => x.refused)) audit(deps.ring, req, c, `refused: ${c.refused}`);
    }
    return { refused: anyRefused, steps: checked.map(base) };
  }
  const steps: StepReport[] = [];
  for (const c of checked) {
    try {
      const outcome = await deps.tools.call(c.device, c.step.tool, c.step.arguments, signal);
      audit(deps.ring, req, c, outcome.status === 'ok' ? 'ok' : `tool error: ${outcome.error}`);
      steps.push(
        outcome.status === 'ok'
          ? { ...base(c), status: 'ok', result: outcome.result }
          : { ...base(c), status: 'error', error: { code: outcome.code ?? 'tool_failed', message: outcome.error } },
      );
    } catch (err) {
      const e = toLookoutError(err);
      audit(deps.ring, req, c, `failed: ${e.code}`);
      steps.push({ ...base(c), status: 'error', error: { code: e.code, message: e.message } });
    }
  }
  return { refused: false, steps };
}

function audit(ring: DebugRing, req: ExecuteRequest, c: Checked, what: string): void {
  ring.record({
    kind: 'svc_agent',
    device_id: c.device.deviceId,
    message: `svc-agent step ${c.index} ${c.step.tool}: ${what}`,
    details: { agent: req.agent ?? null, tool: c.step.tool, read_only: c.readOnly, approved: req.approved },
  });
}
