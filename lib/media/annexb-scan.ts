/**
 * The one start-code scan of Annex B byte streams (H.265 and H.264): the streaming AnnexBSplitter,
 * the whole-buffer split (RTSP's packetizer, parameter sets) and the TypeScript twin of the native
 * picture count all find NAL units with it, so they agree to the byte on where each one begins and ends.
 */

/**
 * Where the next start code (00 00 01) at or after `from` begins, if it lies wholly before `end`;
 * -1 when there is none (then positions from `max(from, end - 2)` on are still undecided: a start
 * code may begin there once more bytes arrive). A byte above 1 at i+2 rules out a start code at i,
 * i+1 or i+2, so most bytes are looked at once in three.
 */
export function nextStartCode(b: Uint8Array, from: number, end: number = b.length): number {
  let i = from;
  while (i + 2 < end) {
    if (b[i + 2] > 1) {
      i += 3;
      continue;
    }
    if (b[i] === 0 && b[i + 1] === 0 && b[i + 2] === 1) return i;
    i++;
  }
  return -1;
}

/** The end of the NAL in b[at, end) without its trailing zeros (trailing_zero_8bits, the first zero of a 4-byte start code). */
export function endWithoutZeros(b: Uint8Array, at: number, end: number): number {
  while (end > at && b[end - 1] === 0) end--;
  return end;
}

/**
 * The NAL units of a whole Annex B buffer as [at, end) ranges, without copying: bytes before the
 * first start code ignored, trailing zeros stripped, empty units skipped. The last unit, open at the
 * end of the buffer, is dropped when longer than `maxNalBytes` (as AnnexBSplitter drops one).
 */
export function forEachNal(b: Uint8Array, onNal: (at: number, end: number) => void, maxNalBytes = Infinity): void {
  let nalStart = -1;
  for (let i = nextStartCode(b, 0); i >= 0; i = nextStartCode(b, i + 3)) {
    if (nalStart >= 0) emit(b, nalStart, i, onNal);
    nalStart = i + 3;
  }
  if (nalStart >= 0 && b.length - nalStart > maxNalBytes) return;
  if (nalStart >= 0) emit(b, nalStart, b.length, onNal);
}

function emit(b: Uint8Array, at: number, end: number, onNal: (at: number, end: number) => void): void {
  const stripped = endWithoutZeros(b, at, end);
  if (stripped > at) onNal(at, stripped);
}

/** The NAL units of a whole Annex B buffer (views into it, not copies), as forEachNal finds them. */
export function nalUnitsOf(data: Buffer): Buffer[] {
  const nals: Buffer[] = [];
  forEachNal(data, (at, end) => nals.push(data.subarray(at, end)));
  return nals;
}
