/** Width and height from a JPEG's start-of-frame marker (any SOFn but DHT, JPG and DAC), or undefined. */
export function jpegSize(jpeg: Uint8Array): { width: number; height: number } | undefined {
  let i = 2;
  while (i + 9 < jpeg.length) {
    if (jpeg[i] !== 0xff) return undefined;
    const marker = jpeg[i + 1];
    if (marker === 0xff) {
      i++;
      continue;
    }
    const length = (jpeg[i + 2] << 8) | jpeg[i + 3];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (jpeg[i + 5] << 8) | jpeg[i + 6], width: (jpeg[i + 7] << 8) | jpeg[i + 8] };
    }
    i += 2 + length;
  }
  return undefined;
}
