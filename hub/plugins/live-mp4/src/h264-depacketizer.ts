/** One picture: its NAL units (without start codes), RTP time (90 kHz) and whether it is a keyframe (IDR). */
export interface AccessUnit {
  nals: Buffer[];
  rtpTime: number;
  keyframe: boolean;
}

const MAX_AU_BYTES = 8 * 1024 * 1024;

/**
 * RTP H.264 payloads (RFC 6184: single NAL units, STAP-A, FU-A) back into access units. A picture
 * ends at the marker bit or when the timestamp changes; a picture with a lost fragment is dropped
 * (its decoder would show garbage) until the next keyframe.
 */
export class H264Depacketizer {
  private nals: Buffer[] = [];
  private bytes = 0;
  private time: number | undefined;
  private fu: Buffer[] | undefined;
  private lastSeq: number | undefined;
  private broken = false;
  /** After a loss, pictures are dropped until a keyframe. */
  private waitKeyframe = false;
  lost = 0;

  constructor(private readonly onAccessUnit: (au: AccessUnit) => void) {}

  push(packet: Buffer): void {
    if (packet.length < 12 || packet[0] >> 6 !== 2) return;
    const cc = packet[0] & 0x0f;
    const hasExtension = (packet[0] & 0x10) !== 0;
    const padding = (packet[0] & 0x20) !== 0 ? packet[packet.length - 1] : 0;
    const marker = (packet[1] & 0x80) !== 0;
    const seq = packet.readUInt16BE(2);
    const time = packet.readUInt32BE(4);
    let offset = 12 + cc * 4;
    if (hasExtension) {
      if (packet.length < offset + 4) return;
      offset += 4 + packet.readUInt16BE(offset + 2) * 4;
    }
    const payload = packet.subarray(offset, packet.length - padding);
    if (payload.length === 0) return;
    if (this.lastSeq !== undefined && seq !== ((this.lastSeq + 1) & 0xffff)) {
      this.lost++;
      this.broken = true;
      this.fu = undefined;
    }
    this.lastSeq = seq;
    if (this.time !== undefined && time !== this.time) this.flush();
    this.time = time;
    this.take(payload);
    if (marker) this.flush();
  }

  private take(payload: Buffer): void {
    const type = payload[0] & 0x1f;
    if (type >= 1 && type <= 23) return this.add(payload);
    if (type === 24) {
      // STAP-A: 16-bit sizes, each followed by a NAL unit.
      for (let i = 1; i + 2 <= payload.length;) {
        const size = payload.readUInt16BE(i);
        i += 2;
        if (size === 0 || i + size > payload.length) return;
        this.add(payload.subarray(i, i + size));
        i += size;
      }
      return;
    }
    if (type === 28 && payload.length > 2) {
      const start = (payload[1] & 0x80) !== 0;
      const end = (payload[1] & 0x40) !== 0;
      if (start) this.fu = [Buffer.from([(payload[0] & 0xe0) | (payload[1] & 0x1f)])];
      if (!this.fu) return; // a fragment whose start was lost
      this.fu.push(payload.subarray(2));
      if (end) {
        this.add(Buffer.concat(this.fu));
        this.fu = undefined;
      }
    }
  }

  private add(nal: Buffer): void {
    this.bytes += nal.length;
    if (this.bytes > MAX_AU_BYTES) {
      this.broken = true;
      return;
    }
    this.nals.push(Buffer.from(nal));
  }

  private flush(): void {
    const nals = this.nals;
    const time = this.time;
    const broken = this.broken || this.fu !== undefined;
    this.nals = [];
    this.bytes = 0;
    this.fu = undefined;
    this.broken = false;
    if (broken) {
      this.waitKeyframe = true;
      return;
    }
    if (nals.length === 0 || time === undefined) return;
    const keyframe = nals.some((n) => (n[0] & 0x1f) === 5);
    if (this.waitKeyframe && !keyframe) return;
    this.waitKeyframe = false;
    this.onAccessUnit({ nals, rtpTime: time, keyframe });
  }
}
