/** Picture size from an H.264 SPS (ITU-T H.264 7.3.2.1.1), cropping applied; undefined when it cannot be read. */
export function spsSize(sps: Buffer): { width: number; height: number } | undefined {
  try {
    const r = new BitReader(unescape(sps.subarray(1)));
    const profile = r.bits(8);
    r.bits(16); // constraint flags, level
    r.ue(); // seq_parameter_set_id
    let chromaFormat = 1;
    if ([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].includes(profile)) {
      chromaFormat = r.ue();
      if (chromaFormat === 3) r.bits(1);
      r.ue(); // bit_depth_luma
      r.ue(); // bit_depth_chroma
      r.bits(1);
      if (r.bits(1)) {
        for (let i = 0; i < (chromaFormat !== 3 ? 8 : 12); i++) {
          if (!r.bits(1)) continue;
          let last = 8;
          let next = 8;
          for (let j = 0; j < (i < 6 ? 16 : 64) && next !== 0; j++) {
            next = (last + r.se() + 256) % 256;
            last = next === 0 ? last : next;
          }
        }
      }
    }
    r.ue(); // log2_max_frame_num
    const pocType = r.ue();
    if (pocType === 0) r.ue();
    else if (pocType === 1) {
      r.bits(1);
      r.se();
      r.se();
      const n = r.ue();
      for (let i = 0; i < n; i++) r.se();
    }
    r.ue(); // max_num_ref_frames
    r.bits(1);
    const widthMbs = r.ue() + 1;
    const heightMapUnits = r.ue() + 1;
    const frameMbsOnly = r.bits(1);
    if (!frameMbsOnly) r.bits(1);
    r.bits(1);
    let [cl, cr, ct, cb] = [0, 0, 0, 0];
    if (r.bits(1)) [cl, cr, ct, cb] = [r.ue(), r.ue(), r.ue(), r.ue()];
    const subW = chromaFormat === 1 || chromaFormat === 2 ? 2 : 1;
    const subH = chromaFormat === 1 ? 2 : 1;
    const cropX = chromaFormat === 0 ? 1 : subW;
    const cropY = (chromaFormat === 0 ? 1 : subH) * (2 - frameMbsOnly);
    const width = widthMbs * 16 - (cl + cr) * cropX;
    const height = (2 - frameMbsOnly) * heightMapUnits * 16 - (ct + cb) * cropY;
    return width > 0 && height > 0 ? { width, height } : undefined;
  } catch {
    return undefined;
  }
}

/** Removes emulation prevention bytes (00 00 03 → 00 00). */
function unescape(b: Buffer): Buffer {
  const out: number[] = [];
  for (let i = 0; i < b.length; i++) {
    if (i >= 2 && b[i] === 3 && b[i - 1] === 0 && b[i - 2] === 0) continue;
    out.push(b[i]);
  }
  return Buffer.from(out);
}

class BitReader {
  private pos = 0;
  constructor(private readonly b: Buffer) {}
  bits(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) {
      const byte = this.b[this.pos >> 3];
      if (byte === undefined) throw new RangeError('SPS ends early');
      v = v * 2 + ((byte >> (7 - (this.pos & 7))) & 1);
      this.pos++;
    }
    return v;
  }
  ue(): number {
    let zeros = 0;
    while (this.bits(1) === 0) if (++zeros > 31) throw new RangeError('bad exp-Golomb code');
    return 2 ** zeros - 1 + this.bits(zeros);
  }
  se(): number {
    const k = this.ue();
    return k % 2 === 1 ? (k + 1) / 2 : -(k / 2);
  }
}
