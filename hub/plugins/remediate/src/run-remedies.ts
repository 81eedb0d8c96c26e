import { LookoutError, toLookoutError, type PluginClock } from 'lookout/core';
import type { DebugRing } from '../../debug-ring/src/service.js';
import type { FleetProvision } from '../../fleet-provision/src/service.js';
import type { DeviceRegistry } from '../../registry/src/service.js';
import type { DeviceCommands } from './device-commands.js';
import type { PlannedAction } from './remedy-plan.js';

/** An action as the apply reports it: done (the device said ok), failed (its error or none in time), manual (left to the operator). */
export interface ActionOutcome {
  status: 'done' | 'failed' | 'manual';
  result: unknown;
  error: { code: string; message: string } | null;
}

export interface RunDeps {
  commands: DeviceCommands;
  /** Writes device files over SSH (renew_certificate, reapply_layer); undefined without the fleet-provision plugin. */
  provision: FleetProvision | undefined;
  registry: DeviceRegistry;
  ring: DebugRing | undefined;
  clock: Pick<PluginClock, 'now'>;
  /** How long an announce waits for the registry to hold the hello it caused. */
  settleMs: number;
}

/**
 * Runs one device's planned actions in order, each audited in the debug ring (kind `remediation`)
 * with its outcome. A failed action does not stop the next: each remedies its own module.
 */
export async function runDeviceActions(deviceId: string, actions: readonly PlannedAction[], deps: RunDeps, signal: AbortSignal): Promise<ActionOutcome[]> {
  const out: ActionOutcome[] = [];
  for (const action of actions) {
    const outcome = await runAction(deviceId, action, deps, signal);
    deps.ring?.record({
      kind: 'remediation',
      device_id: deviceId,
      message: `remediation ${action.remedy} (${action.module}): ${outcome.status}${outcome.error ? `: ${outcome.error.code}: ${outcome.error.message}` : ''}`,
      details: {
        remedy: action.remedy,
        module: action.module,
        how: action.how,
        tool: action.tool,
        arguments: action.arguments,
        via: action.via,
        status: outcome.status,
        ...(action.manual_reason ? { manual_reason: action.manual_reason } : {}),
      },
    });
    out.push(outcome);
  }
  return out;
}

async function runAction(deviceId: string, action: PlannedAction, deps: RunDeps, signal: AbortSignal): Promise<ActionOutcome> {
  if (action.how === 'manual') return { status: 'manual', result: null, error: null };
  try {
    if (action.how === 'ssh') return { status: 'done', result: await overSsh(deviceId, action, deps, signal), error: null };
    if (action.tool === null) return { status: 'manual', result: null, error: null };
    const answer = await deps.commands.call(deviceId, action.tool, action.arguments, signal);
    if (answer.ok !== true) {
      return {
        status: 'failed',
        result: null,
        error: { code: answer.error?.code ?? 'tool_failed', message: answer.error?.message ?? 'the device answered not ok' },
      };
    }
    const result = (answer as { result?: unknown }).result ?? null;
    if (action.remedy === 'announce') await waitForAnnounced(deviceId, result, deps, signal);
    return { status: 'done', result, error: null };
  } catch (err) {
    const e = toLookoutError(err);
    return { status: 'failed', result: null, error: { code: e.code, message: e.message } };
  }
}

/**
 * The regrade reads the registry, which learns from the hello the announce published: wait (bounded)
 * until it holds the certificate end the device announced, so that the regrade sees the new hello.
 */
async function waitForAnnounced(deviceId: string, result: unknown, deps: RunDeps, signal: AbortSignal): Promise<void> {
  const notAfter = typeof result === 'object' && result !== null ? (result as { cert_not_after?: unknown }).cert_not_after : undefined;
  const until = deps.clock.now() + deps.settleMs;
  while (deps.clock.now() < until && !signal.aborted) {
    const entry = deps.registry.get(deviceId);
    if (entry && (typeof notAfter !== 'string' || entry.certNotAfter === notAfter)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A remedy that writes the device's files (fleet-provision's steps): its answer says what changed. */
async function overSsh(deviceId: string, action: PlannedAction, deps: RunDeps, signal: AbortSignal): Promise<unknown> {
  if (!deps.provision) throw new LookoutError('service_unavailable', 'the fleet-provision plugin is not running: the hub cannot write device files');
  if (action.remedy === 'renew_certificate') return deps.provision.renewCertificate(deviceId, signal);
  if (action.remedy === 'reapply_layer') {
    const layer = typeof action.arguments.layer === 'string' ? action.arguments.layer : null;
    return deps.provision.reapplyLayer(deviceId, layer, signal);
  }
  throw new LookoutError('internal', `no SSH remedy ${action.remedy}`);
}
