import { html } from 'htm/preact';
import type { Detection } from './store.js';

/**
 * The spec's detection boxes are in pixels of the detector frame, the 640×640 substream, whatever
 * the stream's own size: the overlay's coordinate system is that frame, stretched over the picture
 * as the substream is.
 */
export const DETECTOR_FRAME = 640;

const COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#46f0f0', '#f032e6', '#bcf60c'];

export function DetectionsOverlay(props: { dets: Detection[]; classNames: Record<number, string> }) {
  return html`<svg class="overlay" viewBox=${`0 0 ${DETECTOR_FRAME} ${DETECTOR_FRAME}`} preserveAspectRatio="none" data-testid="dets-overlay">
    ${props.dets.map((d, i) => {
      const [x1, y1, x2, y2] = d.b;
      const colour = COLOURS[(d.track_id ?? d.c) % COLOURS.length];
      const label = `${props.classNames[d.c] ?? `class ${d.c}`}${d.track_id !== undefined ? ` #${d.track_id}` : ''} ${Math.round(d.p * 100)}%`;
      return html`<g key=${i} data-testid="det-box" data-class=${d.c} data-track=${d.track_id ?? ''}>
        <rect
          x=${x1}
          y=${y1}
          width=${Math.max(0, x2 - x1)}
          height=${Math.max(0, y2 - y1)}
          stroke=${colour}
          fill="none"
          stroke-width="3"
          vector-effect="non-scaling-stroke"
        />
        <text x=${x1 + 2} y=${Math.max(14, y1 - 4)} fill=${colour} font-size="18" data-testid="det-label">${label}</text>
      </g>`;
    })}
  </svg>`;
}
