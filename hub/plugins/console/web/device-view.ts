import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { pictureUrl, postJson, q } from './api.js';
import { Clips } from './clips.js';
import { DetectionsOverlay } from './detections-overlay.js';
import type { ShownPicture } from './capture-clock.js';
import { detsForLivePicture, detsForPicture, predatesStream, withRecent, type DetsFrame } from './dets-pairing.js';
import { openEventStream } from './events.js';
import { ago, clock, gradeClass, num, storageClass, thermalClass } from './format.js';
import { LivePlayer, type LiveState } from './live-player.js';
import { Plots } from './plots.js';
import { Timeline } from './timeline.js';
import { setState, useStore } from './store.js';
import { ToolForm } from './tool-form.js';

/** Class names the device's detector publishes (get_rfdetr_status `classes`), for the box labels. */
function useClassNames(deviceId: string): Record<number, string> {
  const [names, setNames] = useState<Record<number, string>>({ 0: 'person' });
  useEffect(() => {
    postJson<{ status: string; result?: { classes?: { id: number; name: string }[] } }>(`/tools/call?target=${q(deviceId)}`, {
      tool: 'get_rfdetr_status',
      arguments: {},
    }).then(
      (r) => {
        const classes = r.result?.classes;
        if (Array.isArray(classes)) setNames(Object.fromEntries(classes.map((c) => [c.id, c.name])));
      },
      () => undefined, // no detector at this layer: class ids stay as they are
    );
  }, [deviceId]);
  return names;
}

/** The device's detections as the hub streams them (GET /fleet/events?device=…&kind=dets). */
function useDetections(deviceId: string): void {
  useEffect(() => {
    // A new stream: the dets the page knows begin with its first message (those of an earlier one have a hole after them).
    setState((s) => ({ detsRecent: { ...s.detsRecent, [deviceId]: [] }, detsFrom: withoutKey(s.detsFrom, deviceId) }));
    return openEventStream({
      path: `/fleet/events?device=${q(deviceId)}&kind=dets`,
      onState: () => undefined,
      onEvent: (name, data) => {
        if (name !== 'dets') return;
        const { device_id: id, ...d } = data as DetsFrame & { device_id: string };
        setState((s) => ({
          dets: { ...s.dets, [id]: d },
          detsRecent: { ...s.detsRecent, [id]: withRecent(s.detsRecent[id] ?? [], d, Date.now()) },
          detsFrom: s.detsFrom[id] === undefined && d.captured_at ? { ...s.detsFrom, [id]: d.captured_at } : s.detsFrom,
        }));
      },
    });
  }, [deviceId]);
}

function withoutKey(o: Record<string, string>, key: string): Record<string, string> {
  const { [key]: _gone, ...rest } = o;
  return rest;
}

/**
 * The live video with the detections of the picture on screen: the player reads each picture's
 * capture time from the stream (prft) and the boxes are those of the dets captured nearest it,
 * within half a frame; a picture with no dets that near gets no boxes (never its neighbour's).
 */
function LiveView(props: { deviceId: string; recent: DetsFrame[]; classNames: Record<number, string> }) {
  const video = useRef<HTMLVideoElement>(null);
  const [state, setLiveState] = useState<{ state: LiveState; detail?: string }>({ state: 'connecting' });
  const [shown, setShown] = useState<{ picture: ShownPicture | undefined; width: number; height: number }>({ picture: undefined, width: 0, height: 0 });
  useEffect(() => {
    const v = video.current!;
    const player = new LivePlayer(
      v,
      props.deviceId,
      (s, detail) => setLiveState(detail === undefined ? { state: s } : { state: s, detail }),
      (picture) =>
        setShown((old) =>
          old.picture?.capturedAtMs === picture?.capturedAtMs &&
          old.picture?.intervalMs === picture?.intervalMs &&
          old.width === v.videoWidth &&
          old.height === v.videoHeight
            ? old
            : { picture, width: v.videoWidth, height: v.videoHeight },
        ),
    );
    return () => player.stop();
  }, [props.deviceId]);
  const paired = detsForLivePicture(props.recent, shown.picture);
  return html`<figure class="media">
    <div class="stage">
      <video ref=${video} data-testid="live-video" muted playsinline autoplay></video>
      ${
        paired
          ? html`<${DetectionsOverlay}
              message=${paired}
              picture=${{ width: shown.width, height: shown.height }}
              classNames=${props.classNames}
              capturedAt=${shown.picture?.capturedAtMs}
            />`
          : null
      }
    </div>
    <figcaption>
      Live <span class=${`badge ${state.state === 'playing' ? 'ok' : 'warn'}`} data-testid="live-state">${state.state}</span>
      <span class="muted small">${state.detail ?? ''}</span>
    </figcaption>
  </figure>`;
}

/**
 * A snapshot with the detections of its own instant drawn over it: the dets whose frame was captured
 * nearest the picture (X-Lookout-Captured-At against the dets' captured_at). The picture may be
 * seconds older than the newest boxes (encode, the GOP's decode, the hub): the newest boxes would sit
 * beside moving figures. Until the dets of that instant are here, the picture has no boxes.
 */
function SnapshotView(props: { deviceId: string; recent: DetsFrame[]; detsFrom: string | undefined; classNames: Record<number, string> }) {
  const [shot, setShot] = useState<{ url: string; capturedAt: string | null; at: string; size: { width: number; height: number } } | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Takes in flight (the first, a retake, clicks): the picture may still change while one is.
  const [busy, setBusy] = useState(0);
  const take = async () => {
    setBusy((n) => n + 1);
    try {
      const picture = await pictureUrl(`/stream/snapshot?target=${q(props.deviceId)}&w=640`);
      setShot((old) => {
        if (old) URL.revokeObjectURL(old.url);
        // Its pixel size comes with its load.
        return { ...picture, at: new Date().toISOString(), size: { width: 0, height: 0 } };
      });
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy((n) => n - 1);
    }
  };
  const paired = shot ? detsForPicture(props.recent, shot.capturedAt, props.detsFrom) : null;
  // A picture from before the page's dets began has no boxes it can be sure of: another is taken, once.
  const retaken = useRef<string | null>(null);
  const early = shot !== null && predatesStream(shot.capturedAt, props.detsFrom);
  useEffect(() => {
    if (!early || !shot || retaken.current === shot.url) return;
    retaken.current = shot.url;
    void take();
  }, [early, shot?.url]);
  // The first snapshot waits (3 s at most) for the detections stream, so that its boxes are there.
  const [ready, setReady] = useState(false);
  useEffect(() => {
    const t = window.setTimeout(() => setReady(true), 3000);
    return () => clearTimeout(t);
  }, [props.deviceId]);
  if (!ready && props.recent.length > 0) setReady(true);
  useEffect(() => {
    if (ready) void take();
  }, [props.deviceId, ready]);
  return html`<figure class="media">
    <div class="stage">
      ${
        shot
          ? html`<img
              src=${shot.url}
              data-testid="snapshot"
              data-captured-at=${shot.capturedAt ?? ''}
              alt="snapshot"
              onLoad=${(e: Event) => {
                const img = e.currentTarget as HTMLImageElement;
                setShot((old) => (old && old.url === shot.url ? { ...old, size: { width: img.naturalWidth, height: img.naturalHeight } } : old));
              }}
            />`
          : html`<div class="thumb empty">${error ?? 'loading…'}</div>`
      }
      ${paired && shot ? html`<${DetectionsOverlay} message=${paired} picture=${shot.size} classNames=${props.classNames} />` : null}
    </div>
    <figcaption>
      Snapshot ${shot ? clock(shot.at) : ''}
      <button class="small" data-testid="snapshot-refresh" data-busy=${busy > 0} onClick=${() => void take()}>new snapshot</button>
    </figcaption>
  </figure>`;
}

export function DeviceView(props: { deviceId: string }) {
  const s = useStore();
  const card = s.cards[props.deviceId];
  const health = s.health?.devices[props.deviceId];
  const recent = s.detsRecent[props.deviceId] ?? [];
  const classNames = useClassNames(props.deviceId);
  useDetections(props.deviceId);
  const recorder = health?.recorder;
  const storage = (health?.storage ?? {}) as Record<string, number | string | undefined>;
  return html`<main class="device">
    <header class="device-head">
      <a href="#/">← fleet</a>
      <h1>${props.deviceId}</h1>
      ${card ? html`<span class=${`badge ${card.presence === 'online' ? 'ok' : card.presence === 'stale' ? 'warn' : 'bad'}`} data-testid="presence">${card.presence}</span>` : null}
      ${health ? html`<span class=${`badge ${gradeClass(health.readiness.grade)}`}>${health.readiness.grade}</span>` : null}
    </header>
    <div class="media-row">
      <${LiveView} deviceId=${props.deviceId} recent=${recent} classNames=${classNames} />
      <${SnapshotView} deviceId=${props.deviceId} recent=${recent} detsFrom=${s.detsFrom[props.deviceId]} classNames=${classNames} />
    </div>
    <div class="columns">
      <section class="panel">
        <h2>Now</h2>
        <dl class="facts">
          <dt>role / layer</dt>
          <dd>${card?.role ?? '—'} / ${card?.layer ?? '—'}</dd>
          <dt>thermal</dt>
          <dd><span class=${thermalClass(card?.thermal_state ?? null)}>${card?.thermal_state ?? '—'}</span> ${num(card?.die_temp_c, 1, ' °C')}</dd>
          <dt>rates</dt>
          <dd>camera ${num(card?.camera_fps)} fps · detection ${num(card?.detection_fps)} fps (${card?.detection ?? '—'})</dd>
          <dt>persons</dt>
          <dd data-testid="person-count">${card?.person_count ?? '—'}</dd>
          <dt>last heard</dt>
          <dd>${ago(card?.last_seen_at ?? null)}</dd>
        </dl>
      </section>
      <section class="panel" data-testid="recording">
        <h2>Recording</h2>
        <dl class="facts">
          <dt>recorder</dt>
          <dd data-testid="recorder-status">${recorder?.status ?? '—'} <span class="muted small">${recorder?.reason ?? ''}</span></dd>
          <dt>chunks</dt>
          <dd>${recorder?.chunk_count ?? '—'}</dd>
          <dt>storage</dt>
          <dd>
            <span class=${storageClass(health?.storage_health ?? null)}>${health?.storage_health ?? '—'}</span>
            ${storage.used_pct !== undefined ? `${String(storage.used_pct)} % used` : ''}
            ${storage.free_gb !== undefined ? `· ${String(storage.free_gb)} GB free` : ''}
          </dd>
        </dl>
      </section>
      <section class="panel" data-testid="plugins">
        <h2>Plugins</h2>
        <ul class="plugins">
          ${(card?.plugins ?? []).map((p) => html`<li><span class=${p.state === 'ok' ? 'ok' : p.state === 'failed' ? 'bad' : 'warn'}>●</span> ${p.name} <span class="muted small">${p.state}${p.code ? ` ${p.code}` : ''}</span></li>`)}
        </ul>
      </section>
    </div>
    <${Timeline} deviceId=${props.deviceId} />
    <${Plots} deviceId=${props.deviceId} />
    <div class="columns">
      <${Clips} deviceId=${props.deviceId} />
      <${ToolForm} deviceId=${props.deviceId} />
    </div>
  </main>`;
}
