import pixelmatch from 'pixelmatch';
import { LookoutError } from 'lookout/core';
import { runFfmpeg } from 'lookout/lib/media';

export interface RgbaImage {
  width: number;
  height: number;
  data: Buffer;
}

/** Any image ffmpeg reads (JPEG, PNG), as RGBA pixels, scaled to `size` when given: one ffmpeg run to PPM, widened here. */
export async function decodeRgba(image: Buffer, size?: { width: number; height: number }): Promise<RgbaImage> {
  const ppm = await runFfmpeg(
    ['-i', 'pipe:0', '-frames:v', '1', ...(size ? ['-vf', `scale=${size.width}:${size.height}`] : []), '-f', 'image2pipe', '-vcodec', 'ppm', 'pipe:1'],
    { input: image, timeoutMs: 20_000, maxOutputBytes: 256 * 1024 * 1024 },
    'recording_unreadable',
  );
  // PPM (binary): "P6", width, height, maxval 255, one whitespace byte, then RGB triplets.
  const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.subarray(0, 64).toString('latin1'));
  if (!header) throw new LookoutError('recording_unreadable', 'the image decoded to no picture');
  const width = Number(header[1]);
  const height = Number(header[2]);
  const rgb = ppm.subarray(header[0].length);
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0, j = 0; i < width * height; i++, j += 3) {
    data[i * 4] = rgb[j];
    data[i * 4 + 1] = rgb[j + 1];
    data[i * 4 + 2] = rgb[j + 2];
    data[i * 4 + 3] = 255;
  }
  return { width, height, data };
}

export async function encodePng(image: RgbaImage): Promise<Buffer> {
  return runFfmpeg(
    [
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgba',
      '-s',
      `${image.width}x${image.height}`,
      '-i',
      'pipe:0',
      '-frames:v',
      '1',
      '-f',
      'image2pipe',
      '-vcodec',
      'png',
      'pipe:1',
    ],
    { input: image.data, timeoutMs: 20_000, maxOutputBytes: 256 * 1024 * 1024 },
    'recording_unreadable',
  );
}

export interface ImageComparison {
  width: number;
  height: number;
  mismatched_pixels: number;
  mismatched_ratio: number;
  diff: RgbaImage;
}

/**
 * Compares a picture with its baseline (the current one scaled to the baseline's size) with
 * pixelmatch: `threshold` is its perceptual colour distance (0 to 1) under which pixels count as
 * equal, so sensor noise and compression do not fail a gate that a moved camera or a black frame should.
 */
export function compareImages(baseline: RgbaImage, current: RgbaImage, threshold: number): ImageComparison {
  const diff = Buffer.alloc(baseline.width * baseline.height * 4);
  const mismatched = pixelmatch(baseline.data, current.data, diff, baseline.width, baseline.height, { threshold });
  return {
    width: baseline.width,
    height: baseline.height,
    mismatched_pixels: mismatched,
    mismatched_ratio: mismatched / (baseline.width * baseline.height),
    diff: { width: baseline.width, height: baseline.height, data: diff },
  };
}
