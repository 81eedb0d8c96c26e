import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { getJson, hubFetch, q } from './api.js';
import { ago } from './format.js';

/** A transfer as GET /fleet/transfers answers it (the fields shown). */
interface Transfer {
  id: string;
  device_id: string;
  chunk: string;
  origin: string;
  state: 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
  attempts: number;
  max_attempts: number;
  bytes_done: number;
  bytes_total: number | null;
  rate_bps: number | null;
  error: { code: string; message: string } | null;
  next_attempt_at: string | null;
  updated_at: string;
}

interface TransferList {
  transfers: Transfer[];
  counts: Record<string, number>;
  puller: boolean;
}

const STATES = ['queued', 'running', 'done', 'failed', 'cancelled'];
/** How often the list is asked for again while the page is open: progress moves by the second. */
const POLL_MS = 1000;

function bytes(n: number | null): string {
  if (n === null) return '?';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

const stateClass = (s: Transfer['state']) => (s === 'done' ? 'ok' : s === 'failed' ? 'bad' : s === 'cancelled' ? 'muted' : 'warn');

/**
 * The hub's transfer queue (GET /fleet/transfers), polled each second: every pull with its state,
 * a progress bar (bytes of the total), the rate, why it failed; cancel for a queued or running one,
 * retry for a failed or cancelled one.
 */
export function TransfersPanel() {
  const [list, setList] = useState<TransferList | null>(null);
  const [state, setState] = useState('');
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(
    () =>
      getJson<TransferList>(`/fleet/transfers?limit=100${state ? `&state=${q(state)}` : ''}`).then(
        (r) => {
          setList(r);
          setError(null);
        },
        (err: Error) => setError(err.message),
      ),
    [state],
  );
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), POLL_MS);
    return () => clearInterval(timer);
  }, [load]);
  const act = async (t: Transfer, what: 'cancel' | 'retry') => {
    const res = await hubFetch(what === 'cancel' ? `/fleet/transfers/${q(t.id)}` : `/fleet/transfers/${q(t.id)}/retry`, {
      method: what === 'cancel' ? 'DELETE' : 'POST',
    });
    if (!res.ok) {
      const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      setError(body?.error?.message ?? `${res.status}`);
    }
    await load();
  };
  return html`<div class="transfers">
    <div class="filters">
      <label
        >State
        <select data-testid="transfers-state" value=${state} onChange=${(e: Event) => setState((e.target as HTMLSelectElement).value)}>
          <option value="">all</option>
          ${STATES.map((s) => html`<option value=${s}>${s} (${list?.counts[s] ?? 0})</option>`)}
        </select></label
      >
      ${list && !list.puller ? html`<span class="warn">no plugin pulls recordings: transfers wait queued</span>` : null}
    </div>
    ${error ? html`<p class="bad" data-testid="transfers-error">${error}</p>` : null}
    ${list && list.transfers.length === 0 ? html`<p class="muted">No transfers.</p>` : null}
    <table class="grid" data-testid="transfers-table">
      <tbody>
        ${list?.transfers.map((t) => {
          const pct = t.bytes_total ? Math.min(100, Math.round((t.bytes_done / t.bytes_total) * 100)) : 0;
          return html`<tr key=${t.id} data-testid="transfer-row" data-id=${t.id} data-state=${t.state}>
            <td>${t.device_id}<br /><small class="muted">${t.chunk}</small></td>
            <td class=${stateClass(t.state)} data-testid="transfer-state">${t.state}<br /><small class="muted">${t.origin}</small></td>
            <td>
              <progress data-testid="transfer-progress" max="100" value=${pct}></progress>
              <small>${bytes(t.bytes_done)} / ${bytes(t.bytes_total)}${t.rate_bps !== null ? ` · ${bytes(t.rate_bps)}/s` : ''}</small>
            </td>
            <td>
              <small>attempt ${t.attempts}/${t.max_attempts}</small>
              ${t.error ? html`<br /><small class="bad" data-testid="transfer-error" title=${t.error.message}>${t.error.code}: ${t.error.message.slice(0, 160)}</small>` : null}
              ${t.next_attempt_at ? html`<br /><small class="muted">next try ${ago(t.next_attempt_at)}</small>` : null}
            </td>
            <td>
              ${
                t.state === 'queued' || t.state === 'running'
                  ? html`<button class="small" data-testid="transfer-cancel" onClick=${() => void act(t, 'cancel')}>Cancel</button>`
                  : null
              }
              ${
                t.state === 'failed' || t.state === 'cancelled'
                  ? html`<button class="small" data-testid="transfer-retry" onClick=${() => void act(t, 'retry')}>Retry</button>`
                  : null
              }
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}
