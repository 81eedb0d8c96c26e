/**
 * The clip a frame belongs to, from its path: a frame inside a folder below the images root belongs to
 * that folder's clip (`images/clip-a/000012.jpg` → `clip-a`); a frame directly in it to the name before
 * its trailing frame number (`gate3_cam1_000123.jpg` → `gate3_cam1`); a name without one is its own clip.
 */
export function clipOf(relativeToImages: string): string {
  const parts = relativeToImages.split('/');
  if (parts.length > 1) return parts.slice(0, -1).join('/');
  const stem = parts[0].replace(/\.[^.]+$/, '');
  const m = /^(.*?)[-_. ]*(?:frame)?\d+$/i.exec(stem);
  return m && m[1].length > 0 ? m[1] : stem;
}
