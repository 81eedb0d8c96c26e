import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { getJson, q } from './api.js';
import { addRingEvents, useStore, type RingEvent } from './store.js';

/** The hub's debug ring, live (ring events from the event stream after the first page), filtered by device and kind. */
export function DebugView() {
  const s = useStore();
  const [device, setDevice] = useState('');
  const [kind, setKind] = useState('');
  const [kinds, setKinds] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const params = [`limit=200`, device ? `device=${q(device)}` : '', kind ? `kind=${q(kind)}` : ''].filter(Boolean).join('&');
    getJson<{ events: RingEvent[]; kinds: string[] }>(`/debug/events?${params}`).then(
      (r) => {
        addRingEvents(r.events);
        setKinds(r.kinds.filter((k) => k !== 'ingest'));
        setError(null);
      },
      (err: Error) => setError(err.message),
    );
  }, [device, kind]);
  const devices = Object.keys(s.cards).sort();
  const shown = s.ring
    .filter((e) => (!device || e.device_id === device) && (!kind || e.kind === kind))
    .slice(-200)
    .reverse();
  return html`<main>
    <div class="filters">
      <label
        >Device
        <select data-testid="debug-device" value=${device} onChange=${(e: Event) => setDevice((e.target as HTMLSelectElement).value)}>
          <option value="">all</option>
          ${devices.map((d) => html`<option value=${d}>${d}</option>`)}
        </select></label
      >
      <label
        >Kind
        <select data-testid="debug-kind" value=${kind} onChange=${(e: Event) => setKind((e.target as HTMLSelectElement).value)}>
          <option value="">all</option>
          ${kinds.map((k) => html`<option value=${k}>${k}</option>`)}
        </select></label
      >
      <span class="muted small">${shown.length} events</span>
    </div>
    ${error ? html`<p class="error">${error}</p>` : null}
    <ol class="ring" data-testid="debug-tail">
      ${shown.map(
        (e) =>
          html`<li key=${e.seq} data-kind=${e.kind} data-device=${e.device_id ?? ''}>
            <span class="muted small">${new Date(e.timestamp).toLocaleTimeString()}</span>
            <span class="badge">${e.kind}</span>
            ${e.device_id ? html`<a href=${`#/device/${encodeURIComponent(e.device_id)}`}>${e.device_id}</a>` : null}
            <span class="msg">${e.message}</span>
          </li>`,
      )}
    </ol>
  </main>`;
}
