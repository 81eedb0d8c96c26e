import { AnnexBSplitter, HEVC_NAL, nalType } from 'lookout/lib/media';

/** Reads an H.265 RBSP bit by bit (emulation prevention bytes already removed). */
class Bits {
  private pos = 0;
  constructor(private readonly data: Uint8Array) {}
  bit(): number {
    if (this.pos >= this.data.length * 8) throw new RangeError('SPS ends early');
    const b = (this.data[this.pos >> 3] >> (7 - (this.pos & 7))) & 1;
    this.pos++;
    return b;
  }
  bits(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 2 + this.bit();
    return v;
  }
  skip(n: number): void {
    this.pos += n;
  }
  /** Exp-Golomb ue(v). */
  ue(): number {
    let zeros = 0;
    while (this.bit() === 0) if (++zeros > 31) throw new RangeError('bad exp-Golomb code in SPS');
    return 2 ** zeros - 1 + this.bits(zeros);
  }
}

function rbsp(nal: Uint8Array): Uint8Array {
  const out: number[] = [];
  let zeros = 0;
  for (const byte of nal) {
    // 00 00 03 → 00 00: the 03 only keeps a start code from appearing inside the NAL.
    if (zeros >= 2 && byte === 3) {
      zeros = 0;
      continue;
    }
    zeros = byte === 0 ? zeros + 1 : 0;
    out.push(byte);
  }
  return Uint8Array.from(out);
}

/**
 * The displayed size an H.265 SPS NAL (with its 2-byte header) declares: the coded size less the
 * conformance window (ITU-T H.265 7.3.2.2, up to conf_win_bottom_offset; nothing after it is read).
 */
export function hevcSpsSize(nal: Uint8Array): { width: number; height: number } {
  const r = new Bits(rbsp(nal.subarray(2)));
  r.skip(4); // sps_video_parameter_set_id
  const maxSubLayersMinus1 = r.bits(3);
  r.skip(1); // sps_temporal_id_nesting_flag
  // profile_tier_level(1, maxSubLayersMinus1): general profile (88 bits) and level (8 bits)
  r.skip(96);
  const profilePresent: number[] = [];
  const levelPresent: number[] = [];
  for (let i = 0; i < maxSubLayersMinus1; i++) {
    profilePresent.push(r.bit());
    levelPresent.push(r.bit());
  }
  if (maxSubLayersMinus1 > 0) r.skip(2 * (8 - maxSubLayersMinus1));
  for (let i = 0; i < maxSubLayersMinus1; i++) r.skip((profilePresent[i] ? 88 : 0) + (levelPresent[i] ? 8 : 0));
  r.ue(); // sps_seq_parameter_set_id
  const chroma = r.ue();
  if (chroma === 3) r.skip(1); // separate_colour_plane_flag
  let width = r.ue();
  let height = r.ue();
  if (r.bit()) {
    const [left, right, top, bottom] = [r.ue(), r.ue(), r.ue(), r.ue()];
    const subW = chroma === 1 || chroma === 2 ? 2 : 1;
    const subH = chroma === 1 ? 2 : 1;
    width -= subW * (left + right);
    height -= subH * (top + bottom);
  }
  return { width, height };
}

/** The size of the first SPS in an Annex B H.265 stream, or undefined when it holds none (yet). */
export function hevcStreamSize(stream: Uint8Array): { width: number; height: number } | undefined {
  const nals: Uint8Array[] = [];
  const splitter = new AnnexBSplitter((nal) => nals.push(nal));
  splitter.push(stream);
  splitter.flush();
  const sps = nals.find((n) => n.length > 2 && nalType(n) === HEVC_NAL.SPS);
  return sps ? hevcSpsSize(sps) : undefined;
}
