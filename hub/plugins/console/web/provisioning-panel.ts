import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { getJson, hubFetch } from './api.js';

/** One step of POST /fleet/provision-shadow (hub/plugins/fleet-provision). */
interface Step {
  name: string;
  status: string;
  detail: string | null;
  at: string | null;
}
interface Grade {
  grade: string;
  reason: string | null;
}
interface Outcome {
  device_id: string;
  ok: boolean;
  /** The answer's, or on an error the steps its details carry. */
  steps: Step[];
  grade: Grade | null;
  changed?: boolean;
  resumed?: boolean;
  error?: { code: string; message: string };
}
interface Record_ {
  device_id: string;
  host: string;
  port: number;
  layer: string;
  state: string;
  updated_at: string;
}

type AuthMethod = 'hub' | 'password' | 'key';

const STATUS_CLASS: Record<string, string> = { done: 'ok', unchanged: 'ok', skipped: '', pending: 'warn', failed: 'bad', undone: 'warn' };

/** Sends the form; an error answer keeps its steps (details.steps), so the operator sees where it stopped. */
async function provision(body: Record<string, unknown>): Promise<Outcome> {
  const res = await hubFetch('/fleet/provision-shadow', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const text = await res.text();
  const json = (text ? JSON.parse(text) : {}) as {
    steps?: Step[];
    grade?: Grade | null;
    changed?: boolean;
    resumed?: boolean;
    error?: { code: string; message: string; details?: { steps?: Step[] } };
  };
  const deviceId = String(body.device_id);
  if (res.ok) {
    return {
      device_id: deviceId,
      ok: true,
      steps: json.steps ?? [],
      grade: json.grade ?? null,
      ...(json.changed !== undefined ? { changed: json.changed } : {}),
      ...(json.resumed !== undefined ? { resumed: json.resumed } : {}),
    };
  }
  return {
    device_id: deviceId,
    ok: false,
    steps: json.error?.details?.steps ?? [],
    grade: null,
    error: { code: json.error?.code ?? 'http_error', message: json.error?.message ?? `${res.status}` },
  };
}

/**
 * The operations page's provisioning section: a form (device id, SSH address, password or key, the
 * host key to pin, layer) that calls POST /fleet/provision-shadow, the steps it answers with their
 * status and the device's grade, and each device's last provisioning. The password and key are sent
 * once and cleared from the form.
 */
export function ProvisioningPanel() {
  const [deviceId, setDeviceId] = useState('');
  const [host, setHost] = useState('');
  const [port, setPort] = useState('22');
  const [method, setMethod] = useState<AuthMethod>('hub');
  const [secret, setSecret] = useState('');
  const [hostKey, setHostKey] = useState('');
  const [layer, setLayer] = useState('layer2');
  const [root, setRoot] = useState('/');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [records, setRecords] = useState<Record_[]>([]);

  const loadRecords = () =>
    getJson<{ provisions: Record_[] }>('/fleet/provision-shadow').then(
      (r) => setRecords(r.provisions),
      () => setRecords([]),
    );
  useEffect(() => {
    void loadRecords();
  }, []);

  const submit = async (e: Event, undo = false) => {
    e.preventDefault();
    setBusy(true);
    const auth = method === 'password' ? { method, password: secret } : method === 'key' ? { method, private_key: secret } : { method };
    try {
      setOutcome(
        await provision({
          device_id: deviceId.trim(),
          host: host.trim(),
          port: Number(port),
          auth,
          layer: layer.trim(),
          root: root.trim() || '/',
          ...(hostKey.trim() ? { host_key: hostKey.trim() } : {}),
          ...(undo ? { undo: true } : {}),
        }),
      );
    } catch (err) {
      setOutcome({ device_id: deviceId, ok: false, steps: [], grade: null, error: { code: 'network', message: (err as Error).message } });
    } finally {
      setSecret('');
      setBusy(false);
      void loadRecords();
    }
  };

  return html`<div class="provisioning">
    <form data-testid="provision-form" onSubmit=${(e: Event) => void submit(e)}>
      <label>Device id <input name="device_id" required value=${deviceId} onInput=${(e: Event) => setDeviceId((e.target as HTMLInputElement).value)} /></label>
      <label>Host <input name="host" required value=${host} onInput=${(e: Event) => setHost((e.target as HTMLInputElement).value)} /></label>
      <label
        >Port <input name="port" type="number" min="1" max="65535" value=${port} onInput=${(e: Event) => setPort((e.target as HTMLInputElement).value)}
      /></label>
      <label
        >Authentication
        <select name="auth" value=${method} onChange=${(e: Event) => setMethod((e.target as HTMLSelectElement).value as AuthMethod)}>
          <option value="hub">the hub's (DEVICE_PASSWORD / key file)</option>
          <option value="password">password</option>
          <option value="key">private key</option>
        </select></label
      >
      ${
        method === 'password'
          ? html`<label
              >Password
              <input
                name="password"
                type="password"
                autocomplete="off"
                value=${secret}
                onInput=${(e: Event) => setSecret((e.target as HTMLInputElement).value)}
            /></label>`
          : method === 'key'
            ? html`<label
                >Private key
                <textarea name="private_key" rows="4" value=${secret} onInput=${(e: Event) => setSecret((e.target as HTMLTextAreaElement).value)}></textarea>
              </label>`
            : null
      }
      <label
        >Host key to pin
        <input name="host_key" placeholder="ssh-ed25519 AAAA…" value=${hostKey} onInput=${(e: Event) => setHostKey((e.target as HTMLInputElement).value)}
      /></label>
      <label>Layer <input name="layer" value=${layer} onInput=${(e: Event) => setLayer((e.target as HTMLInputElement).value)} /></label>
      <label title="/ on a device; another folder for a staged image"
        >Device root <input name="root" value=${root} onInput=${(e: Event) => setRoot((e.target as HTMLInputElement).value)}
      /></label>
      <button type="submit" disabled=${busy}>${busy ? 'Provisioning…' : 'Provision'}</button>
      <button type="button" disabled=${busy} onClick=${(e: Event) => void submit(e, true)}>Undo</button>
    </form>
    ${outcome ? html`<${OutcomeView} outcome=${outcome} />` : null} ${records.length > 0 ? html`<${RecordsTable} records=${records} />` : null}
  </div>`;
}

/** What the last call answered: its outcome line and each step's status. */
function OutcomeView({ outcome }: { outcome: Outcome }) {
  return html`<div data-testid="provision-outcome">
    <p class=${outcome.ok ? 'ok' : 'bad'}>
      ${outcome.device_id}:
      ${
        outcome.ok
          ? html`<strong data-testid="provision-grade">${outcome.grade ? outcome.grade.grade : 'provisioned'}</strong>
              ${outcome.grade?.reason ? ` (${outcome.grade.reason})` : ''}${outcome.changed === false ? ' — nothing changed' : ''}${outcome.resumed ? ' — resumed' : ''}`
          : html`<strong data-testid="provision-error">${outcome.error?.code}</strong> ${outcome.error?.message}`
      }
    </p>
    <table data-testid="provision-steps">
      <thead>
        <tr>
          <th>step</th>
          <th>status</th>
          <th>detail</th>
        </tr>
      </thead>
      <tbody>
        ${outcome.steps.map(
          (s) =>
            html`<tr key=${s.name} data-step=${s.name}>
              <td>${s.name}</td>
              <td class=${STATUS_CLASS[s.status] ?? ''}>${s.status}</td>
              <td>${s.detail ?? ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** Each device's last provisioning (GET /fleet/provision-shadow). */
function RecordsTable({ records }: { records: Record_[] }) {
  return html`<table data-testid="provision-records">
    <thead>
      <tr>
        <th>device</th>
        <th>address</th>
        <th>layer</th>
        <th>state</th>
        <th>updated</th>
      </tr>
    </thead>
    <tbody>
      ${records.map(
        (r) =>
          html`<tr key=${r.device_id}>
            <td>${r.device_id}</td>
            <td>${r.host}:${r.port}</td>
            <td>${r.layer}</td>
            <td class=${r.state === 'provisioned' ? 'ok' : r.state === 'failed' ? 'bad' : 'warn'}>${r.state}</td>
            <td>${r.updated_at}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
