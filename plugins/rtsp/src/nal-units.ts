/** The codecs the preview serves, with how their NAL headers read. */
export type VideoCodec = 'h265' | 'h264';

/**
 * The NAL units of one access unit in Annex B (start codes of 3 or 4 bytes), without their start
 * codes. The encoder's pictures are well formed, so a plain scan is enough here.
 */
export function splitAnnexB(data: Buffer): Buffer[] {
  const nals: Buffer[] = [];
  let start = -1;
  let i = 0;
  while (i + 2 < data.length) {
    if (data[i + 2] > 1) {
      i += 3;
      continue;
    }
    if (data[i] === 0 && data[i + 1] === 0 && data[i + 2] === 1) {
      if (start >= 0) nals.push(trimZeros(data.subarray(start, i)));
      start = i + 3;
      i += 3;
    } else i++;
  }
  if (start >= 0 && start < data.length) nals.push(trimZeros(data.subarray(start)));
  return nals.filter((n) => n.length > 0);
}

function trimZeros(nal: Buffer): Buffer {
  let end = nal.length;
  while (end > 0 && nal[end - 1] === 0) end--;
  return nal.subarray(0, end);
}

export function nalTypeOf(codec: VideoCodec, nal: Buffer): number {
  return codec === 'h265' ? (nal[0] >> 1) & 0x3f : nal[0] & 0x1f;
}

/** The parameter sets a keyframe carries (H.265: VPS, SPS, PPS; H.264: SPS, PPS), for the SDP. */
export interface ParameterSets {
  vps?: Buffer;
  sps: Buffer;
  pps: Buffer;
}

export function parameterSetsOf(codec: VideoCodec, keyframe: Buffer): ParameterSets | undefined {
  let vps: Buffer | undefined;
  let sps: Buffer | undefined;
  let pps: Buffer | undefined;
  for (const nal of splitAnnexB(keyframe)) {
    const type = nalTypeOf(codec, nal);
    if (codec === 'h265') {
      if (type === 32) vps ??= nal;
      else if (type === 33) sps ??= nal;
      else if (type === 34) pps ??= nal;
    } else if (type === 7) sps ??= nal;
    else if (type === 8) pps ??= nal;
  }
  if (!sps || !pps || (codec === 'h265' && !vps)) return undefined;
  return { ...(vps ? { vps } : {}), sps, pps };
}
