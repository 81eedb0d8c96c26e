import { answerOf, grader, withoutAnswer } from './grade-kit.js';
import type { DeviceFacts } from './device-facts.js';
import type { FiveMinuteCheck, ModuleResult } from './readiness-schemas.js';

/**
 * mcp_health: the device's MCP tool server, asked get_system_health through the hub's tool proxy
 * (the registry's tool URL, the hub's limits and enrichment). Applies to every device.
 *  - ready: it answered, its own status is `ok`, and the enrichment carries its listen_ports and
 *    overlay_mount (the two five-minute fields no other module grades)
 *  - degraded: it answered, but its status is `degraded` or `critical` (a failed plugin, storage),
 *    or listen_ports or overlay_mount are missing (with the hub's reason)
 *  - not_ready: no answer (not in the registry, an address the hub may not contact, unreachable,
 *    timed out, busy) or the tool's own failure
 */
export function gradeMcpHealth(facts: DeviceFacts, check: FiveMinuteCheck): ModuleResult {
  const g = grader(facts, 'get_system_health on the device tool server through the hub (POST /tools/call, enriched)');
  const noAnswer = withoutAnswer(facts);
  const presence = facts.presence;
  if (noAnswer) return g.notReady({ presence, tool_url: facts.registered?.toolUrl ?? null }, noAnswer);
  const answer = answerOf(facts)!;
  const status = typeof answer.status === 'string' ? answer.status : null;
  const value = {
    presence,
    status,
    storage_health: answer.storage_health ?? null,
    listen_ports: check.fields.listen_ports.value,
    overlay_mount: check.fields.overlay_mount.value,
  };
  const problems: string[] = [];
  if (status !== 'ok') problems.push(`the device's health status is ${status ?? 'missing'}${failedPlugins(answer)}`);
  for (const f of ['listen_ports', 'overlay_mount'] as const) {
    if (!check.fields[f].ok) problems.push(`${f}: ${check.fields[f].reason ?? 'missing'}`);
  }
  return problems.length ? g.degraded(value, problems.join('; ')) : g.ready(value);
}

function failedPlugins(answer: Record<string, unknown>): string {
  const list = Array.isArray(answer.plugins) ? (answer.plugins as { name?: unknown; state?: unknown }[]) : [];
  const bad = list.filter((p) => p.state === 'failed' || p.state === 'degraded').map((p) => `${String(p.name)} ${String(p.state)}`);
  const storage = answer.storage_health !== 'OK' && typeof answer.storage_health === 'string' ? [`storage ${answer.storage_health}`] : [];
  const all = [...bad, ...storage];
  return all.length ? ` (${all.join(', ')})` : '';
}
