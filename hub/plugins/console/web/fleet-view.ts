import { html } from 'htm/preact';
import { Component } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { blobUrl, q } from './api.js';
import { ago, clock, gradeClass, num, storageClass, thermalClass } from './format.js';
import { useStore, type DeviceCard, type DeviceHealth } from './store.js';

const THUMB_EVERY_MS = 10_000;
/**
 * Cards on one page: each card asks a snapshot every THUMB_EVERY_MS, so a fleet of 1 000 shown at once
 * would ask the hub 100 pictures a second and lay out 1 000 cards; a page keeps both to its size.
 */
export const FLEET_PAGE_SIZE = 48;
/** The newest picture of each device, kept across remounts (a filter change must not blank the cards). */
const lastThumb = new Map<string, string>();

/** A device's latest picture (GET /stream/snapshot with the token, shown from an object URL), refreshed while online. */
function Thumbnail(props: { deviceId: string; online: boolean }) {
  const [url, setUrl] = useState<string | null>(lastThumb.get(props.deviceId) ?? null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    if (!props.online) return;
    let stopped = false;
    const controller = new AbortController();
    const load = async () => {
      try {
        const next = await blobUrl(`/stream/snapshot?target=${q(props.deviceId)}&w=320`, controller.signal);
        if (stopped) return URL.revokeObjectURL(next);
        const previous = lastThumb.get(props.deviceId);
        lastThumb.set(props.deviceId, next);
        setUrl(next);
        if (previous) URL.revokeObjectURL(previous);
        setFailed(null);
      } catch (err) {
        if (!stopped) setFailed(err instanceof Error ? err.message : String(err));
      }
    };
    void load();
    const timer = window.setInterval(() => void load(), THUMB_EVERY_MS);
    return () => {
      stopped = true;
      controller.abort();
      clearInterval(timer);
    };
  }, [props.deviceId, props.online]);
  if (url) return html`<img class="thumb" src=${url} alt=${`latest picture of ${props.deviceId}`} />`;
  return html`<div class="thumb empty">${props.online ? (failed ? 'no picture' : 'loading…') : 'offline'}</div>`;
}

interface CardProps {
  card: DeviceCard;
  health: DeviceHealth | undefined;
  /** The clock's second: "last heard … ago" moves on with it. */
  second: number;
}

/**
 * A card is drawn again only when its device's card or health changed, or a second passed: the
 * fleet's other devices (a thousand cards a second) leave it alone.
 */
class Card extends Component<CardProps> {
  shouldComponentUpdate(next: CardProps): boolean {
    return next.card !== this.props.card || next.health !== this.props.health || next.second !== this.props.second;
  }

  render() {
    return cardBody(this.props);
  }
}

function cardBody(props: CardProps) {
  const { card: c, health: h } = props;
  const grade = h?.readiness.grade ?? null;
  const since = c.presence === 'offline' ? c.offline_since : c.last_seen_at;
  return html`<a
    class=${`card ${c.presence}`}
    href=${`#/device/${encodeURIComponent(c.device_id)}`}
    data-testid="device-card"
    data-device=${c.device_id}
    data-presence=${c.presence}
  >
    <${Thumbnail} deviceId=${c.device_id} online=${c.presence === 'online'} />
    <div class="card-body">
      <div class="card-title">
        <strong>${c.device_id}</strong>
        <span class=${`badge ${c.presence === 'online' ? 'ok' : c.presence === 'stale' ? 'warn' : 'bad'}`} data-testid="presence">${c.presence}</span>
      </div>
      <div class="muted small">${c.presence === 'offline' ? `offline since ${clock(since)}` : `last heard ${ago(since)}`}</div>
      <dl class="facts">
        <dt>role</dt>
        <dd>${c.role ?? '—'}</dd>
        <dt>layer</dt>
        <dd>${c.layer ?? '—'}</dd>
        <dt>thermal</dt>
        <dd><span class=${thermalClass(c.thermal_state)}>${c.thermal_state ?? '—'}</span> ${num(c.die_temp_c, 1, ' °C')}</dd>
        <dt>storage</dt>
        <dd><span class=${storageClass(c.storage_health)}>${c.storage_health ?? '—'}</span></dd>
        <dt>persons</dt>
        <dd>${c.person_count ?? '—'} <span class="muted small">${c.age_s > 5 ? `(${Math.round(c.age_s)} s old)` : ''}</span></dd>
        <dt>readiness</dt>
        <dd><span class=${gradeClass(grade)} data-testid="grade">${grade ?? '—'}</span></dd>
      </dl>
    </div>
  </a>`;
}

function Summary() {
  const s = useStore();
  const f = s.health?.fleet;
  const r = f?.readiness ?? {};
  const cards = Object.values(s.cards);
  return html`<section class="summary" data-testid="fleet-summary">
    <div><span class="big">${cards.length}</span> devices</div>
    <div><span class="big ok">${cards.filter((c) => c.presence === 'online').length}</span> online</div>
    <div><span class="big bad">${cards.filter((c) => c.presence !== 'online').length}</span> offline or stale</div>
    <div class="readiness">
      readiness:
      <span class="ok" data-testid="ready-count">${r.ready ?? 0} ready</span> · <span class="warn">${r.degraded ?? 0} degraded</span> ·
      <span class="bad">${r.not_ready ?? 0} not ready</span>
    </div>
  </section>`;
}

/** The clock's second, moving on each second while the fleet page shows. */
function useSecond(): number {
  const [second, setSecond] = useState(() => Math.floor(Date.now() / 1000));
  useEffect(() => {
    const timer = window.setInterval(() => setSecond(Math.floor(Date.now() / 1000)), 1000);
    return () => clearInterval(timer);
  }, []);
  return second;
}

/** Every device as a card, filtered by role and state; the fleet's readiness on top; recent incidents. */
export function FleetView() {
  const s = useStore();
  const [role, setRole] = useState('');
  const [presence, setPresence] = useState('');
  const [search, setSearch] = useState('');
  const [pageNo, setPageNo] = useState(0);
  const second = useSecond();
  const cards = s.deviceIds.map((id) => s.cards[id]);
  const roles = [...new Set(cards.map((c) => c.role).filter((r): r is string => r !== null))].sort();
  const needle = search.trim().toLowerCase();
  const shown = cards.filter(
    (c) => (!role || c.role === role) && (!presence || c.presence === presence) && (!needle || c.device_id.toLowerCase().includes(needle)),
  );
  const pages = Math.max(1, Math.ceil(shown.length / FLEET_PAGE_SIZE));
  const current = Math.min(pageNo, pages - 1);
  const onPage = shown.slice(current * FLEET_PAGE_SIZE, (current + 1) * FLEET_PAGE_SIZE);
  const filter = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLInputElement | HTMLSelectElement).value);
    setPageNo(0);
  };
  return html`<main>
    <${Summary} />
    <div class="filters">
      <label
        >Role
        <select data-testid="filter-role" value=${role} onChange=${filter(setRole)}>
          <option value="">all</option>
          ${roles.map((r) => html`<option value=${r}>${r}</option>`)}
        </select></label
      >
      <label
        >State
        <select data-testid="filter-state" value=${presence} onChange=${filter(setPresence)}>
          <option value="">all</option>
          <option value="online">online</option>
          <option value="offline">offline</option>
          <option value="stale">stale</option>
        </select></label
      >
      <label>Device <input data-testid="filter-search" type="search" placeholder="id contains…" value=${search} onInput=${filter(setSearch)} /></label>
      <span class="muted small">${shown.length} of ${cards.length}</span>
      ${
        pages > 1
          ? html`<span class="pager" data-testid="fleet-pager" data-page=${current + 1} data-pages=${pages}>
              <button class="small" disabled=${current === 0} onClick=${() => setPageNo(current - 1)}>‹ prev</button>
              page ${current + 1} of ${pages}
              <button class="small" disabled=${current >= pages - 1} onClick=${() => setPageNo(current + 1)}>next ›</button>
            </span>`
          : null
      }
    </div>
    <section class="cards">
      ${onPage.map((c) => html`<${Card} key=${c.device_id} card=${c} health=${s.health?.devices[c.device_id]} second=${second} />`)}
    </section>
    ${cards.length === 0 ? html`<p class="muted">No device has reported yet.</p>` : null}
    ${
      s.incidents.length > 0
        ? html`<section class="panel">
            <h2>Incidents</h2>
            <ul class="incidents">
              ${s.incidents
                .slice(0, 10)
                .map(
                  (i) =>
                    html`<li>
                      <span class="muted small">${clock(i.at)}</span> <a href=${`#/device/${encodeURIComponent(i.device_id)}`}>${i.device_id}</a> ${i.message}
                    </li>`,
                )}
            </ul>
          </section>`
        : null
    }
  </main>`;
}
