import { html } from 'htm/preact';
import type { Detection } from './store.js';

/**
 * The project's one coordinate rule (core's contracts/detection-frame.ts, DESIGN.md): boxes are in
 * pixels of the detector frame (the dets message's frame_width × frame_height, else 640×640), and
 * that frame is the whole picture stretched on each axis on its own. The overlay's viewBox is that
 * frame and it is stretched over the picture (preserveAspectRatio none, as the picture's object-fit
 * fill), so x lands at x · picture width / frame width, y at y · picture height / frame height.
 */

const COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#46f0f0', '#f032e6', '#bcf60c'];

export function DetectionsOverlay(props: { dets: Detection[]; frame: { width: number; height: number }; classNames: Record<number, string> }) {
  const { width, height } = props.frame;
  return html`<svg class="overlay" viewBox=${`0 0 ${width} ${height}`} preserveAspectRatio="none" data-testid="dets-overlay">
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
