import type { AutomationEntry, PluginRestart } from 'lookout/core';

/** The automation_log entry of a plugin restart (restart_plugin, from the hub's remediation or an operator). */
export function restartLogEntry(r: PluginRestart): AutomationEntry {
  const back = r.plugin.state === 'ok' || r.plugin.state === 'degraded' || r.plugin.state === 'starting';
  const why = [r.plugin.code, r.plugin.message].filter((s) => s !== undefined && s !== '').join(': ');
  return {
    action: 'plugin_restart',
    plugin: r.plugin.name,
    trigger: 'restart_plugin',
    outcome: back ? 'ok' : 'failed',
    message: back
      ? `plugin ${r.plugin.name} restarted: ${r.plugin.state}${r.dependents.length ? `; back with it: ${r.dependents.join(', ')}` : ''}`
      : `plugin ${r.plugin.name} failed again on restart${why ? ` (${why})` : ''}`,
    details: { state: r.plugin.state, ...(r.plugin.code ? { code: r.plugin.code } : {}), dependents: r.dependents, asked_at: r.at },
  };
}
