import { html } from 'htm/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { blobUrl, getJson, HubError, q } from './api.js';
import { openEventStream, type ConnectionState } from './events.js';
import { clock } from './format.js';
import {
  bucketCounts,
  chunkAt,
  chunkSpan,
  incidentOfEvent,
  incidentOfRing,
  mergeIncidents,
  onlineSpans,
  thermalSpans,
  type Chunk,
  type Incident,
  type Span,
  type TimelineSample,
} from './timeline-data.js';

const RANGES = [
  { label: '5 min', ms: 5 * 60_000 },
  { label: '15 min', ms: 15 * 60_000 },
  { label: '1 h', ms: 3600_000 },
  { label: '6 h', ms: 6 * 3600_000 },
  { label: '24 h', ms: 24 * 3600_000 },
];
const PALETTE = ['#f58231', '#4363d8', '#3cb44b', '#e6194b', '#911eb4', '#42d4f4', '#f032e6', '#9a6324'];
/** Points of the counts strip at most: its cost stays that of a few hundred pixels whatever the range. */
const BUCKETS = 300;
/** How long a click waits for the chunk holding its moment to be recorded and listed. */
const CLIP_WAIT_MS = 60_000;

interface History {
  step_s: number;
  samples: TimelineSample[];
}

/**
 * The device's history as a review timeline (as NVRs show one): counts per class over time, online
 * spans, thermal suspensions, recorded chunks and incidents marked at their time; a click on a mark
 * (or on the recordings strip) plays the chunk holding that moment from that moment.
 */
export function Timeline(props: { deviceId: string }) {
  const [rangeMs, setRangeMs] = useState(15 * 60_000);
  const [now, setNow] = useState(Date.now());
  const [history, setHistory] = useState<History | null>(null);
  const [chunks, setChunks] = useState<Chunk[]>([]);
  const [ringIncidents, setRingIncidents] = useState<Incident[]>([]);
  const [liveIncidents, setLiveIncidents] = useState<Incident[]>([]);
  const [thermalChanges, setThermalChanges] = useState<{ at: number; to: string | null }[]>([]);
  const [error, setError] = useState<string | null>(null);
  // Said on the strip (data-live): until the stream is live an incident arrives only with the ring's reload.
  const [stream, setStream] = useState<ConnectionState>('connecting');
  const from = now - rangeMs;

  const loadHistory = async () => {
    // `from`/`to` are for a hub whose history keeps more than its ring; one without them answers its window.
    try {
      const h = await getJson<History>(`/fleet/history?device=${q(props.deviceId)}&from=${from}&to=${now}`);
      setHistory(h);
    } catch (err) {
      if (err instanceof HubError && err.status === 400) setHistory(await getJson<History>(`/fleet/history?device=${q(props.deviceId)}`));
      else if (err instanceof HubError && err.status === 404) setHistory({ step_s: 5, samples: [] });
      else throw err;
    }
  };
  const loadChunks = async (): Promise<Chunk[]> => {
    const r = await getJson<{ recent_chunks: Chunk[] }>(`/fleet/playback-ready?shadow=${q(props.deviceId)}&limit=200`);
    const mine = r.recent_chunks.filter((c) => c.device_id === props.deviceId);
    setChunks(mine);
    return mine;
  };
  const loadIncidents = async () => {
    const r = await getJson<{ events: { topic?: string; timestamp: string }[] }>(`/debug/events?kind=ingest&device=${q(props.deviceId)}&limit=1000`);
    setRingIncidents(r.events.map(incidentOfRing).filter((i): i is Incident => i !== null));
  };
  const loadAll = () => {
    setNow(Date.now());
    for (const p of [loadHistory(), loadChunks(), loadIncidents()]) p.catch((err: Error) => setError(err.message));
  };

  useEffect(() => {
    loadAll();
    const t = window.setInterval(loadAll, 15_000);
    return () => clearInterval(t);
  }, [props.deviceId, rangeMs]);

  // Live: new samples, incidents and thermal changes land on the strip as they come.
  useEffect(
    () =>
      openEventStream({
        path: `/fleet/events?device=${q(props.deviceId)}&kind=incident,thermal,sample`,
        onState: setStream,
        onEvent: (name, data) => {
          const d = data as Record<string, unknown>;
          if (d.device_id !== props.deviceId) return;
          if (name === 'incident') {
            const i = incidentOfEvent(d);
            if (i) setLiveIncidents((old) => [...old, i]);
          } else if (name === 'thermal') setThermalChanges((old) => [...old, { at: Date.now(), to: typeof d.to === 'string' ? d.to : null }]);
          else if (name === 'sample') setHistory((h) => (h ? { ...h, samples: [...h.samples, d.sample as TimelineSample] } : h));
          setNow(Date.now());
        },
      }),
    [props.deviceId],
  );

  const samples = history?.samples ?? [];
  const stepMs = (history?.step_s ?? 5) * 1000;
  const incidents = useMemo(() => mergeIncidents(ringIncidents, liveIncidents).filter((i) => i.at >= from), [ringIncidents, liveIncidents, from]);
  const online = useMemo(() => onlineSpans(samples, Math.max(3 * stepMs, 10_000)), [samples, stepMs]);
  const thermal = useMemo(() => thermalSpans(samples, thermalChanges, now), [samples, thermalChanges, now]);
  const buckets = useMemo(() => bucketCounts(samples, from, now, BUCKETS), [samples, from, now]);
  const classes = useMemo(() => [...new Set(buckets.flatMap((b) => Object.keys(b.counts)))].sort(), [buckets]);
  const top = Math.max(1, ...buckets.flatMap((b) => Object.values(b.counts)));
  const x = (t: number) => Math.min(100, Math.max(0, ((t - from) / rangeMs) * 100));
  const spanStyle = (s: Span) => `left:${x(s.from)}%;width:${Math.max(0.2, x(s.to) - x(s.from))}%`;

  const player = usePlayAt(props.deviceId, chunks, loadChunks);

  return html`<section class="panel timeline" data-testid="timeline" data-live=${stream}>
    <h2>
      Timeline
      <span class="ranges">
        ${RANGES.map((r) => html`<button class=${`small ${r.ms === rangeMs ? 'active' : ''}`} onClick=${() => setRangeMs(r.ms)}>${r.label}</button>`)}
      </span>
    </h2>
    ${error ? html`<p class="error">${error}</p>` : null}
    <div class="tl-rows">
      <div class="tl-label">counts</div>
      <svg class="tl-counts" viewBox="0 0 1000 40" preserveAspectRatio="none" data-testid="timeline-counts" data-points=${buckets.length}>
        ${classes.map(
          (c, i) =>
            html`<polyline
              fill="none"
              stroke=${PALETTE[i % PALETTE.length]}
              stroke-width="1.5"
              vector-effect="non-scaling-stroke"
              points=${buckets
                .filter((b) => b.counts[c] !== undefined)
                .map((b) => `${(x(b.t) * 10).toFixed(1)},${(40 - (b.counts[c] / top) * 38).toFixed(1)}`)
                .join(' ')}
              ><title>${c}</title></polyline
            >`,
        )}
      </svg>
      <div class="tl-label">online</div>
      <div class="tl-strip" data-testid="timeline-online">
        ${online.map((s) => html`<span class="tl-span ok" style=${spanStyle(s)} title=${`${clock(new Date(s.from).toISOString())} – ${clock(new Date(s.to).toISOString())}`}></span>`)}
      </div>
      <div class="tl-label">thermal</div>
      <div class="tl-strip" data-testid="timeline-thermal">
        ${thermal.map((s) => html`<span class="tl-span bad" style=${spanStyle(s)} title="thermal suspension"></span>`)}
      </div>
      <div class="tl-label">clips</div>
      <div class="tl-strip" data-testid="timeline-clips">
        ${chunks.map((c) => {
          const span = chunkSpan(c);
          return span && span.to >= from
            ? html`<span
                class=${`tl-span clip ${c.justified ? 'warn' : ''}`}
                style=${spanStyle(span)}
                title=${c.name}
                onClick=${(e: MouseEvent) => {
                  const box = (e.currentTarget as HTMLElement).getBoundingClientRect();
                  void player.play(span.from + ((e.clientX - box.left) / Math.max(1, box.width)) * (span.to - span.from));
                }}
              ></span>`
            : null;
        })}
      </div>
      <div class="tl-label">incidents</div>
      <div class="tl-strip" data-testid="timeline-incidents">
        ${incidents.map(
          (i) =>
            html`<button
              class="tl-mark"
              style=${`left:${x(i.at)}%`}
              data-testid="timeline-incident"
              data-at=${new Date(i.at).toISOString()}
              title=${`${clock(new Date(i.at).toISOString())} ${i.type}${i.text ? `: ${i.text}` : ''}`}
              onClick=${() => void player.play(i.at)}
            ></button>`,
        )}
      </div>
      <div class="tl-label"></div>
      <div class="tl-axis muted small"><span>${clock(new Date(from).toISOString())}</span><span>${clock(new Date(now).toISOString())}</span></div>
    </div>
    ${player.view}
  </section>`;
}

/** Plays the chunk holding a moment, from that moment; waits (polling the chunk list) while it is still being recorded. */
function usePlayAt(deviceId: string, chunks: Chunk[], reload: () => Promise<Chunk[]>) {
  const [playing, setPlaying] = useState<{ url: string; offsetS: number; chunk: string; at: number } | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const video = useRef<HTMLVideoElement>(null);
  const attempt = useRef(0);
  useEffect(() => () => playing && URL.revokeObjectURL(playing.url), [playing]);
  useEffect(() => () => void attempt.current++, [deviceId]);
  const play = async (at: number) => {
    const mine = ++attempt.current;
    setNote(`finding the clip of ${clock(new Date(at).toISOString())}…`);
    let list = chunks;
    const until = Date.now() + CLIP_WAIT_MS;
    for (;;) {
      const found = chunkAt(list, at);
      if (found) {
        try {
          const url = await blobUrl(found.chunk.playUrl);
          if (mine !== attempt.current) return URL.revokeObjectURL(url);
          setPlaying({ url, offsetS: found.offsetS, chunk: found.chunk.name, at });
          setNote(null);
        } catch (err) {
          setNote(err instanceof Error ? err.message : String(err));
        }
        return;
      }
      if (Date.now() > until || at > Date.now() + 5000) return setNote('No recording holds that moment.');
      setNote('waiting for the clip of that moment to be recorded…');
      await new Promise((r) => setTimeout(r, 2000));
      if (mine !== attempt.current) return;
      list = await reload().catch(() => list);
    }
  };
  const view = html`${note ? html`<p class="muted small" data-testid="timeline-note">${note}</p>` : null}
  ${
    playing
      ? html`<video
          ref=${video}
          key=${playing.url}
          class="clip-player"
          data-testid="timeline-player"
          data-chunk=${playing.chunk}
          data-offset=${playing.offsetS.toFixed(3)}
          data-at=${new Date(playing.at).toISOString()}
          src=${playing.url}
          controls
          muted
          playsinline
          onLoadedMetadata=${(e: Event) => {
            const v = e.currentTarget as HTMLVideoElement;
            v.currentTime = Math.min(playing.offsetS, Math.max(0, v.duration - 0.05));
          }}
          onSeeked=${(e: Event) => {
            // Played once at the moment: a play() asked before the seek ends can be cut off by it.
            const v = e.currentTarget as HTMLVideoElement;
            if (v.paused && !v.ended && v.dataset.started !== 'true') {
              v.dataset.started = 'true';
              v.play().catch((err: Error) => (v.dataset.playError = err.message));
            }
          }}
        ></video>`
      : null
  }`;
  return { play, view };
}
