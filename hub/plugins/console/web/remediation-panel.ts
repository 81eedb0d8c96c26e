import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { postJson } from './api.js';

/** POST /fleet/remediate's answer, as far as the panel shows it. */
interface Action {
  remedy: string;
  module: string;
  reason: string;
  how: 'cmd_tool' | 'ssh' | 'manual';
  tool: string | null;
  arguments: Record<string, unknown>;
  manual: string | null;
  manual_reason?: string | null;
  via?: string | null;
  status: 'planned' | 'done' | 'failed' | 'manual';
  error: { code: string; message: string } | null;
  module_after: string | null;
}
interface DeviceReport {
  device_id: string;
  grade_before: string | null;
  reason_before: string | null;
  actions: Action[];
  grade_after: string | null;
  reason_after: string | null;
}
interface Remediation {
  dry_run: boolean;
  devices: DeviceReport[];
  summary: { devices: number; devices_with_actions: number; actions: number; failed: number; manual: number };
  generated_at: string;
}

const summaryLine = (p: Remediation) =>
  `${p.dry_run ? 'Dry run' : 'Applied'}: ${p.summary.actions} actions on ${p.summary.devices_with_actions} of ${p.summary.devices} devices` +
  `${p.summary.manual ? `, ${p.summary.manual} manual` : ''}${p.summary.failed ? `, ${p.summary.failed} failed` : ''}`;
const gradeClass = (g: string | null) => (g === 'ready' ? 'ok' : g === 'degraded' ? 'warn' : 'bad');
const statusClass = (s: Action['status']) => (s === 'done' ? 'ok' : s === 'failed' ? 'bad' : 'warn');

function ActionRow({ a }: { a: Action }) {
  const what =
    a.how === 'manual'
      ? `${a.manual}${a.manual_reason ? ` (manual: ${a.manual_reason})` : ''}`
      : a.how === 'ssh'
        ? `over SSH to ${a.via}`
        : `${a.tool}(${JSON.stringify(a.arguments)})`;
  return html`<li data-testid="remediation-action" data-remedy=${a.remedy} data-status=${a.status}>
    <b>${a.remedy}</b> <span class="muted">${a.module}</span> — ${a.reason}
    <div><code>${what}</code></div>
    ${
      a.status !== 'planned'
        ? html`<div>
            <span class=${statusClass(a.status)} data-testid="action-status">${a.status}</span>
            ${a.error ? html` ${a.error.code}: ${a.error.message}` : null}
            ${a.module_after ? html` · ${a.module} now <span class=${gradeClass(a.module_after)}>${a.module_after}</span>` : null}
          </div>`
        : null
    }
  </li>`;
}

/**
 * Remediation on the operations page: a dry run of POST /fleet/remediate shows, per device, what
 * would be done for each failing readiness module; Apply runs that plan (apply: true) and shows each
 * action's outcome and the device's grade after. Nothing is applied without the dry run shown first.
 */
export function RemediationPanel() {
  const [plan, setPlan] = useState<Remediation | null>(null);
  const [busy, setBusy] = useState<'plan' | 'apply' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (apply: boolean) => {
    setBusy(apply ? 'apply' : 'plan');
    setError(null);
    try {
      // The apply is limited to the devices the dry run showed with actions: it does what was shown.
      const devices = apply && plan ? plan.devices.filter((d) => d.actions.length > 0).map((d) => d.device_id) : undefined;
      setPlan(await postJson<Remediation>('/fleet/remediate', { apply, ...(devices ? { devices } : {}) }));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(null);
    }
  };
  const acting = plan?.devices.filter((d) => d.actions.length > 0) ?? [];
  return html`<div data-testid="remediation">
    <p class="muted">The known remedy for each failing readiness module: a dry run first, then apply.</p>
    <button data-testid="remediation-plan" disabled=${busy !== null} onClick=${() => void run(false)}>${busy === 'plan' ? 'Checking…' : 'Dry run'}</button>
    ${
      plan?.dry_run && acting.length > 0
        ? html` <button data-testid="remediation-apply" disabled=${busy !== null} onClick=${() => void run(true)}>
            ${busy === 'apply' ? 'Applying…' : `Apply ${plan.summary.actions} actions`}
          </button>`
        : null
    }
    ${error ? html`<p class="bad" data-testid="remediation-error">${error}</p>` : null}
    ${
      plan
        ? html`<p data-testid="remediation-summary" data-dry-run=${String(plan.dry_run)}>${summaryLine(plan)}</p>
            ${acting.length === 0 ? html`<p class="ok">Nothing to remedy.</p>` : null}
            ${acting.map(
              (d) =>
                html`<div key=${d.device_id} data-testid="remediation-device" data-device=${d.device_id}>
                  <h3>
                    ${d.device_id} <span class=${gradeClass(d.grade_before)}>${d.grade_before ?? 'unchecked'}</span>
                    ${d.grade_after ? html` → <span class=${gradeClass(d.grade_after)} data-testid="grade-after">${d.grade_after}</span>` : null}
                  </h3>
                  <ul>
                    ${d.actions.map((a) => html`<${ActionRow} a=${a} />`)}
                  </ul>
                </div>`,
            )}`
        : null
    }
  </div>`;
}
