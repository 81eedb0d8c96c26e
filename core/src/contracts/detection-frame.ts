/**
 * Where a detection box lies on a picture of the same camera: the one coordinate rule of the project
 * (DESIGN.md, "Wire decisions"). Dependency-free on purpose: the device, the hub and tests use it
 * through lookout/core, and the console's overlay draws the same rule (its SVG viewBox is the
 * detector frame, stretched over the picture).
 *
 * The rule: a Detection's `b` is in pixels of the frame the detector saw, and that frame is the whole
 * field of view the picture shows, resized on each axis on its own (no letterbox, no crop: the
 * detector's preprocess resizes the whole frame to the model's input and its decode scales back to
 * the frame, and the encoder scales the same frame to the stream's size). So a box goes onto a
 * picture of any size by scaling x by picture.width / frame.width and y by picture.height / frame.height.
 */

export interface PixelSize {
  width: number;
  height: number;
}

/** The frame boxes refer to when a dets message does not say (the 640×640 substream, DESIGN.md). */
export const DEFAULT_DETECTOR_FRAME: Readonly<PixelSize> = Object.freeze({ width: 640, height: 640 });

/** The frame a dets message's boxes are in: its frame_width × frame_height, else the 640×640 default. */
export function detectorFrameOf(message: { frame_width?: unknown; frame_height?: unknown }): PixelSize {
  const { frame_width: w, frame_height: h } = message;
  return typeof w === 'number' && typeof h === 'number' && w > 0 && h > 0 ? { width: w, height: h } : { ...DEFAULT_DETECTOR_FRAME };
}

/** `b`'s first four numbers, [x1, y1, x2, y2] in `frame` pixels, in pixels of `picture`. */
export function boxOnPicture(b: readonly number[], frame: PixelSize, picture: PixelSize): [number, number, number, number] {
  if (b.length < 4) throw new RangeError(`a box needs 4 numbers, got ${b.length}`);
  const sx = picture.width / frame.width;
  const sy = picture.height / frame.height;
  return [b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy];
}
