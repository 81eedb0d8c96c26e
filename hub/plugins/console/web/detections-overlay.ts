import { html } from 'htm/preact';
import { boxOnPicture, detectorFrameOf } from 'lookout/core/contracts';
import type { DetsFrame } from './dets-pairing.js';

/**
 * The boxes of one dets message over the picture they belong to, placed by the project's one
 * coordinate rule (core's contracts/detection-frame.ts, bundled into the page as it is: boxOnPicture
 * from the message's detector frame to the picture's own pixels). The overlay's viewBox is the
 * picture's pixel size and it is stretched over the picture as the picture is over its box (object-fit
 * fill, preserveAspectRatio none), so a box lands where the rule puts it whatever size it is shown at.
 */

const COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#46f0f0', '#f032e6', '#bcf60c'];

export function DetectionsOverlay(props: {
  message: DetsFrame;
  picture: { width: number; height: number };
  classNames: Record<number, string>;
  /** The picture's capture time (Unix ms) where it is known, shown as an attribute beside the boxes'. */
  capturedAt?: number | undefined;
}) {
  const { width, height } = props.picture;
  // Before the picture's size is known (not loaded yet) there is nowhere to put a box.
  if (!(width > 0 && height > 0)) return null;
  const frame = detectorFrameOf(props.message);
  // Labels at the same share of the picture's height whatever its pixel size (18 px of a 640 px one).
  const text = Math.max(8, Math.round((height * 18) / 640));
  return html`<svg
    class="overlay"
    viewBox=${`0 0 ${width} ${height}`}
    preserveAspectRatio="none"
    data-testid="dets-overlay"
    data-captured-at=${props.message.captured_at ?? ''}
    data-picture-captured-at=${props.capturedAt === undefined ? '' : new Date(props.capturedAt).toISOString()}
  >
    ${props.message.dets.map((d, i) => {
      const [x1, y1, x2, y2] = boxOnPicture(d.b, frame, props.picture);
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
        <text x=${x1 + 2} y=${Math.max(text * 0.8, y1 - text / 4)} fill=${colour} font-size=${text} data-testid="det-label">${label}</text>
      </g>`;
    })}
  </svg>`;
}
