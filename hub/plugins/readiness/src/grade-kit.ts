import type { PluginReport } from 'lookout/core';
import { clipReason, clipValue } from './clip-evidence.js';
import { describePlugin, pluginOf, type DeviceFacts, type HealthAnswer } from './device-facts.js';
import type { ModuleGrade, ModuleResult } from './readiness-schemas.js';

/** Builds one module's result with its evidence: what was checked, when, the value seen, why. */
export interface ModuleGrader {
  ready(value: unknown): ModuleResult;
  degraded(value: unknown, reason: string): ModuleResult;
  notReady(value: unknown, reason: string): ModuleResult;
  notApplicable(reason: string): ModuleResult;
}

/** Every module's evidence goes through here: what the device supplied in its value and reason is clipped (clip-evidence.ts). */
export function grader(facts: DeviceFacts, checked: string): ModuleGrader {
  const at = new Date(facts.at).toISOString();
  const make = (grade: ModuleGrade, value: unknown, reason: string | null): ModuleResult => ({
    grade,
    evidence: { checked, at, value: clipValue(value), reason: clipReason(reason) },
  });
  return {
    ready: (value) => make('ready', value, null),
    degraded: (value, reason) => make('degraded', value, reason),
    notReady: (value, reason) => make('not_ready', value, reason),
    notApplicable: (reason) => make('not_applicable', null, reason),
  };
}

/** Why the device's enriched health answer is missing (every module reading it is then not_ready), or null. */
export function withoutAnswer(facts: DeviceFacts): string | null {
  return facts.health.ok ? null : `the device did not answer get_system_health through the hub: ${facts.health.code}: ${facts.health.reason}`;
}

export function answerOf(facts: DeviceFacts): HealthAnswer | undefined {
  return facts.health.ok ? facts.health.value : undefined;
}

/** The hub's reason a health enrichment field is missing (`peer_mesh: get_peer_mesh_status failed: …`), without the field name. */
export function enrichmentMissing(answer: HealthAnswer, field: string): string | undefined {
  const lines = Array.isArray(answer._vms_enrichment_missing) ? answer._vms_enrichment_missing : [];
  const line = lines.find((l): l is string => typeof l === 'string' && l.startsWith(`${field}:`));
  return line?.slice(field.length + 1).trim();
}

export type PluginGate = { applies: true; plugin: PluginReport } | { applies: false; result: ModuleResult };

/**
 * A module that grades what one device plugin serves: not_applicable when the device reports
 * its plugins and that one is not among them (its image does not carry it, or its layer leaves it
 * off: a device reports only the plugins its layer enables); not_ready when the device cannot be
 * asked, or when whether it applies is not known; not_ready when the plugin failed, was skipped or
 * stopped. Otherwise the module grades on, with the plugin (ok, starting or degraded).
 */
export function pluginGate(facts: DeviceFacts, g: ModuleGrader, name: string, notCarried?: () => string): PluginGate {
  const plugin = pluginOf(facts, name);
  const noAnswer = withoutAnswer(facts);
  if (!facts.plugins) return { applies: false, result: g.notReady(null, `${noAnswer ?? 'no answer'}; whether it runs a ${name} plugin is not known`) };
  if (!plugin) {
    const why = notCarried?.() ?? `the device reports no ${name} plugin (its image ${facts.registered?.image ?? 'unknown'} does not carry it)`;
    return { applies: false, result: g.notApplicable(why) };
  }
  if (noAnswer) return { applies: false, result: g.notReady({ plugin: pluginValue(plugin), plugins_from: facts.plugins.source }, noAnswer) };
  if (plugin.state === 'failed' || plugin.state === 'skipped' || plugin.state === 'stopped') {
    return { applies: false, result: g.notReady({ plugin: pluginValue(plugin) }, `its ${name} plugin is ${describePlugin(plugin)}`) };
  }
  return { applies: true, plugin };
}

/** A plugin that runs but is not fully up: the most its module can be is degraded, and why. */
export function pluginNotOk(plugin: PluginReport): string | null {
  return plugin.state === 'ok' ? null : `its ${plugin.name} plugin is ${describePlugin(plugin)}`;
}

export function pluginValue(p: PluginReport): Record<string, unknown> {
  return { name: p.name, state: p.state, ...(p.code ? { code: p.code } : {}), ...(p.message ? { message: p.message } : {}) };
}
