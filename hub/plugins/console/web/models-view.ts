import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { getJson, HubError, postJson, q } from './api.js';
import { ago } from './format.js';

/** What the model builder answers through the hub (`/api/*`, docs/builder.md). */
interface OntologyView {
  name: string;
  class_map: string;
  classes: { id: number; name: string }[];
  versions: { version: string; hash: string; created_at: string }[];
}
interface SplitCounts {
  frames: number;
  clips: number;
  boxes: number;
}
interface Dataset {
  name: string;
  format: string;
  ontology: string;
  state: string;
  reason: string | null;
  progress: { phase: string | null; done: number; total: number };
  splits: { train: SplitCounts; val: SplitCounts; test: SplitCounts };
}
interface Job {
  id: string;
  kind: string;
  state: string;
  reason: string | null;
  progress: number;
  progress_note: string | null;
  executor: string | null;
  updated_at: string;
}
interface Package {
  id: string;
  version: string;
  sha256: string;
  ontology_hash: string;
  train_job_id: string | null;
}
interface Deployment {
  device: string;
  package_version: string;
  state: string;
  since: string;
}
interface Models {
  ontologies: OntologyView[];
  datasets: Dataset[];
  jobs: Job[];
  packages: Package[];
  deployments: Deployment[];
}

const REFRESH_MS = 5000;

async function loadModels(): Promise<Models> {
  const names = await getJson<{ ontologies: { name: string }[] }>('/api/ontologies');
  const [ontologies, datasets, jobs, packages, deployments] = await Promise.all([
    Promise.all(names.ontologies.map((o) => getJson<OntologyView>(`/api/ontology?ontology=${q(o.name)}`))),
    getJson<{ datasets: Dataset[] }>('/api/datasets'),
    getJson<{ jobs: Job[] }>('/api/pipeline/jobs'),
    getJson<{ packages: Package[] }>('/api/packages'),
    getJson<{ deployments: Deployment[] }>('/api/deployments'),
  ]);
  return { ontologies, datasets: datasets.datasets, jobs: jobs.jobs, packages: packages.packages, deployments: deployments.deployments };
}

function stateClass(state: string): string {
  return /FAILED/.test(state) ? 'bad' : /COMPLETE|DEPLOYED|READY|active/.test(state) ? 'ok' : 'warn';
}

/** The model builder seen through the hub: ontologies, datasets and their splits, jobs, packages and where they run, and deploys. */
export function ModelsView() {
  const [models, setModels] = useState<Models | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    loadModels().then(
      (m) => {
        setModels(m);
        setError(null);
      },
      (err: Error) =>
        setError(
          err instanceof HubError && (err.status === 503 || err.status === 502)
            ? `No model builder answers behind this hub (${err.message}). Start one (npm start runs it beside the hub) or give the hub --builder-url.`
            : err.message,
        ),
    );
  useEffect(() => {
    void load();
    const t = window.setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(t);
  }, []);
  return html`<main class="models" data-testid="models">
    <h1>Models</h1>
    ${error ? html`<p class="error" data-testid="models-error">${error}</p>` : null}
    ${
      models === null
        ? error
          ? null
          : html`<p class="muted">loading…</p>`
        : html`
            <${Ontologies} ontologies=${models.ontologies} />
            <${Datasets} datasets=${models.datasets} />
            <${Jobs} jobs=${models.jobs} />
            <${Packages} packages=${models.packages} deployments=${models.deployments} onDeployed=${() => void load()} />
          `
    }
  </main>`;
}

function Ontologies(props: { ontologies: OntologyView[] }) {
  return html`<section class="panel" data-testid="ontologies">
    <h2>Ontologies</h2>
    ${props.ontologies.map(
      (o) =>
        html`<div class="ontology" data-testid="ontology" data-name=${o.name}>
          <strong>${o.name}</strong> <span class="muted small">${o.class_map} · ${o.versions.at(-1)?.version ?? 'not compiled'}</span>
          <div class="small">${o.classes.map((c) => html`<span class="badge" title=${`id ${c.id}`}>${c.name}</span> `)}</div>
        </div>`,
    )}
  </section>`;
}

function Datasets(props: { datasets: Dataset[] }) {
  return html`<section class="panel" data-testid="datasets">
    <h2>Datasets</h2>
    ${
      props.datasets.length === 0
        ? html`<p class="muted">No dataset imported.</p>`
        : html`<table class="grid">
            <thead>
              <tr>
                <th>name</th>
                <th>state</th>
                <th>ontology</th>
                <th>train</th>
                <th>val</th>
                <th>test</th>
              </tr>
            </thead>
            <tbody>
              ${props.datasets.map(
                (d) =>
                  html`<tr data-testid="dataset" data-name=${d.name}>
                    <td>${d.name} <span class="muted small">${d.format}</span></td>
                    <td>
                      <span class=${stateClass(d.state)}>${d.state}</span>
                      ${d.state === 'IMPORTING' ? html` <span class="small">${d.progress.done}/${d.progress.total}</span>` : null}
                      ${d.reason ? html` <span class="small muted">${d.reason}</span>` : null}
                    </td>
                    <td>${d.ontology}</td>
                    ${(['train', 'val', 'test'] as const).map(
                      (s) =>
                        html`<td data-testid=${`split-${s}`} data-frames=${d.splits[s].frames}>
                          ${d.splits[s].frames} frames <span class="muted small">${d.splits[s].clips} clips · ${d.splits[s].boxes} boxes</span>
                        </td>`,
                    )}
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}

function Jobs(props: { jobs: Job[] }) {
  const [open, setOpen] = useState<string | null>(null);
  return html`<section class="panel" data-testid="jobs">
    <h2>Jobs</h2>
    ${
      props.jobs.length === 0
        ? html`<p class="muted">No job yet.</p>`
        : html`<table class="grid">
            <thead>
              <tr>
                <th>job</th>
                <th>kind</th>
                <th>state</th>
                <th>progress</th>
                <th>executor</th>
                <th>updated</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              ${props.jobs.map(
                (j) =>
                  html`<tr data-testid="job" data-id=${j.id} data-state=${j.state}>
                      <td class="small">${j.id}</td>
                      <td>${j.kind}</td>
                      <td>
                        <span class=${stateClass(j.state)} data-testid="job-state">${j.state}</span>
                        ${j.reason ? html`<span class="small muted">${j.reason}</span>` : null}
                      </td>
                      <td><progress max="1" value=${j.progress}></progress> <span class="small muted">${j.progress_note ?? ''}</span></td>
                      <td>${j.executor ?? '—'}</td>
                      <td class="small">${ago(j.updated_at)}</td>
                      <td><button class="small" data-testid="job-logs-toggle" onClick=${() => setOpen(open === j.id ? null : j.id)}>logs</button></td>
                    </tr>
                    ${
                      open === j.id
                        ? html`<tr>
                            <td colspan="7"><${JobLogs} id=${j.id} /></td>
                          </tr>`
                        : null
                    }`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}

function JobLogs(props: { id: string }) {
  const [lines, setLines] = useState<{ seq: number; at: string; stream: string; line: string }[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const load = () =>
      getJson<{ lines: { seq: number; at: string; stream: string; line: string }[] }>(`/api/pipeline/jobs/${q(props.id)}/logs`).then(
        (r) => setLines(r.lines),
        (err: Error) => setError(err.message),
      );
    void load();
    const t = window.setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(t);
  }, [props.id]);
  if (error) return html`<p class="error">${error}</p>`;
  return html`<pre class="job-logs" data-testid="job-logs">${(lines ?? []).map((l) => `${l.at} ${l.stream} ${l.line}`).join('\n') || 'no log lines'}</pre>`;
}

function Packages(props: { packages: Package[]; deployments: Deployment[]; onDeployed: () => void }) {
  return html`<section class="panel" data-testid="packages">
    <h2>Packages</h2>
    ${
      props.packages.length === 0
        ? html`<p class="muted">No package built.</p>`
        : props.packages.map((p) => {
            const running = props.deployments.filter((d) => d.package_version === p.version);
            return html`<div class="package" data-testid="package" data-version=${p.version}>
              <strong>${p.version}</strong> <span class="muted small">${p.sha256.slice(0, 12)} · train ${p.train_job_id ?? '—'}</span>
              <div class="small">
                ${running.length === 0 ? html`<span class="muted">runs nowhere</span>` : running.map((d) => html`<span class=${`badge ${stateClass(d.state)}`} title=${`since ${d.since}`}>${d.device} ${d.state}</span> `)}
              </div>
              <${DeployForm} pkg=${p} onDeployed=${props.onDeployed} />
            </div>`;
          })
    }
  </section>`;
}

/**
 * Deploying changes the fleet: as the console's other state-changing actions, nothing goes before the
 * operator has said what (the devices, the layer) and then confirmed that exact deploy.
 */
function DeployForm(props: { pkg: Package; onDeployed: () => void }) {
  const [devices, setDevices] = useState('');
  const [layer, setLayer] = useState('layer2');
  const [armed, setArmed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const list = devices
    .split(/[\s,]+/)
    .map((d) => d.trim())
    .filter(Boolean);
  const deploy = async () => {
    setBusy(true);
    try {
      const job = await postJson<Job>('/api/pipeline/deploy', { package_id: props.pkg.id, devices: list, layer });
      setResult({ ok: true, text: `deploy job ${job.id}: ${job.state}` });
      props.onDeployed();
    } catch (err) {
      setResult({ ok: false, text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
      setArmed(false);
    }
  };
  return html`<form
    class="deploy"
    data-testid="deploy-form"
    onSubmit=${(e: Event) => {
      e.preventDefault();
      if (list.length > 0) setArmed(true);
    }}
  >
    <input
      name="devices"
      placeholder="devices (the canary first)"
      value=${devices}
      onInput=${(e: Event) => (setDevices((e.target as HTMLInputElement).value), setArmed(false))}
    />
    <input name="layer" value=${layer} size="8" onInput=${(e: Event) => (setLayer((e.target as HTMLInputElement).value), setArmed(false))} />
    ${
      armed
        ? html`<span class="confirm" data-testid="deploy-confirm">
            Deploy ${props.pkg.version} to ${list.join(', ')} (canary ${list[0]}), ${layer}?
            <button type="button" class="danger" disabled=${busy} data-testid="deploy-confirm-button" onClick=${() => void deploy()}>
              ${busy ? 'deploying…' : 'Confirm deploy'}
            </button>
            <button type="button" onClick=${() => setArmed(false)}>Cancel</button>
          </span>`
        : html`<button type="submit" disabled=${list.length === 0} data-testid="deploy-button">Deploy…</button>`
    }
    ${result ? html`<span class=${result.ok ? 'ok small' : 'error small'} data-testid="deploy-result">${result.text}</span>` : null}
  </form>`;
}
