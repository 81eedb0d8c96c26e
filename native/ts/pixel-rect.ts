/** A rectangle of a frame in whole pixels. */
export interface PixelRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A packed BGR888 frame: width * height * 3 bytes, row after row. */
export interface BgrImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** The rectangle lies inside a width x height frame and holds at least one pixel. */
export function rectInside(r: PixelRect, width: number, height: number): boolean {
  const ints = [r.x, r.y, r.width, r.height].every(Number.isInteger);
  return ints && r.x >= 0 && r.y >= 0 && r.width > 0 && r.height > 0 && r.x + r.width <= width && r.y + r.height <= height;
}
