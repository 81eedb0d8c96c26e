import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { getJson, q } from './api.js';
import { openEventStream } from './events.js';

/** One point of a device's history, as /fleet/history and the `sample` event give it. */
export interface Sample {
  t: number;
  die_temp_c: number | null;
  camera_fps: number | null;
  detection_fps: number | null;
  person_count: number | null;
}

interface History {
  step_s: number;
  samples: Sample[];
}

const CHARTS: { title: string; unit: string; series: { key: keyof Sample; label: string; stroke: string }[] }[] = [
  { title: 'Die temperature', unit: '°C', series: [{ key: 'die_temp_c', label: 'die °C', stroke: '#e6194b' }] },
  {
    title: 'Frame rates',
    unit: 'fps',
    series: [
      { key: 'camera_fps', label: 'camera fps', stroke: '#4363d8' },
      { key: 'detection_fps', label: 'detection fps', stroke: '#3cb44b' },
    ],
  },
  { title: 'Persons', unit: '', series: [{ key: 'person_count', label: 'persons', stroke: '#f58231' }] },
];

function Chart(props: { spec: (typeof CHARTS)[number]; samples: Sample[] }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    const el = host.current!;
    const width = () => Math.max(200, el.clientWidth);
    plot.current = new uPlot(
      {
        width: width(),
        height: 160,
        scales: { x: { time: true } },
        axes: [{}, { label: props.spec.unit, size: 50 }],
        series: [{}, ...props.spec.series.map((s) => ({ label: s.label, stroke: s.stroke, width: 2, spanGaps: false }))],
        legend: { live: false },
      },
      [[], ...props.spec.series.map(() => [])],
      el,
    );
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: width(), height: 160 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
    };
  }, []);
  useEffect(() => {
    const xs = props.samples.map((s) => s.t / 1000);
    plot.current?.setData([xs, ...props.spec.series.map((s) => props.samples.map((x) => x[s.key]))] as uPlot.AlignedData);
  }, [props.samples]);
  return html`<figure class="chart" data-testid="chart" data-points=${props.samples.length}>
    <figcaption>${props.spec.title}</figcaption>
    <div ref=${host}></div>
  </figure>`;
}

/** Die temperature, camera and detection fps and person count over the last hour, from the hub's history ring, then live. */
export function Plots(props: { deviceId: string }) {
  const [samples, setSamples] = useState<Sample[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stepMs = 5000;
    let stopped = false;
    // This device's samples only: the page's fleet stream leaves them out.
    const unsubscribe = openEventStream({
      path: `/fleet/events?device=${q(props.deviceId)}&kind=sample`,
      onState: () => undefined,
      onEvent: (name, data) => {
        if (name !== 'sample') return;
        const { sample } = data as { sample: Sample };
        setSamples((list) => {
          const last = list.at(-1);
          // The hub updates the newest step's sample until the next step begins.
          if (last && Math.floor(last.t / stepMs) === Math.floor(sample.t / stepMs)) return [...list.slice(0, -1), sample];
          return [...list, sample].filter((s) => s.t > Date.now() - 3600_000);
        });
      },
    });
    getJson<History>(`/fleet/history?device=${q(props.deviceId)}`).then(
      (h) => {
        if (stopped) return;
        stepMs = h.step_s * 1000;
        setSamples((live) => [...h.samples, ...live.filter((s) => s.t > (h.samples.at(-1)?.t ?? 0))]);
      },
      (err: Error) => setError(err.message),
    );
    return () => {
      stopped = true;
      unsubscribe();
    };
  }, [props.deviceId]);
  return html`<section class="panel plots">
    <h2>Last hour</h2>
    ${error ? html`<p class="muted">${error}</p>` : null}
    <div class="charts">${CHARTS.map((c) => html`<${Chart} key=${c.title} spec=${c} samples=${samples} />`)}</div>
  </section>`;
}
