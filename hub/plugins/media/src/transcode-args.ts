/** The two mp4s a chunk is served as. */
export type ClipVariant = 'h264' | 'hevc';

/** Suffix of each variant in clip URLs and cache file names. */
export const VARIANT_SUFFIX: Record<ClipVariant, string> = { h264: '.mp4', hevc: '.hevc.mp4' };

/**
 * ffmpeg's arguments for one chunk. A raw H.265 stream carries no timestamps, so the frame rate
 * comes from the sidecar (`-framerate`). The H.264 one plays in every browser; the HEVC one is the
 * original bitstream remuxed (no decode, no encode), tagged `hvc1` as Safari and hardware players
 * want. `+faststart` puts the index first, so playback starts before the whole file arrived.
 */
export function transcodeArgs(variant: ClipVariant, input: string, output: string, fps: number, preset = 'veryfast'): string[] {
  const head = ['-y', '-framerate', String(fps), '-f', 'hevc', '-i', input, '-map', '0:v:0'];
  const codec = variant === 'h264' ? ['-c:v', 'libx264', '-preset', preset, '-pix_fmt', 'yuv420p'] : ['-c', 'copy', '-tag:v', 'hvc1'];
  return [...head, ...codec, '-movflags', '+faststart', '-f', 'mp4', output];
}
