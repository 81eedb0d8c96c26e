import { nalUnitsOf } from 'lookout/lib/media';
import type { VideoCodec } from './nal-units.js';

/** Seconds from NTP's epoch (1900) to Unix's (1970). */
const NTP_UNIX_OFFSET_S = 2_208_988_800;

/** RTP payload type of the video in the SDP (dynamic range). */
export const PAYLOAD_TYPE = 96;

/**
 * One access unit as RTP payloads: each NAL in a packet of its own when it fits (single NAL unit
 * packets), else cut into fragmentation units (H.265 FU, RFC 7798 4.4.3; H.264 FU-A, RFC 6184
 * 5.8). The payloads are made once per picture and shared by every viewer of the path; each viewer
 * only puts its own RTP header in front. The marker bit goes on the picture's last packet.
 */
export function packetize(codec: VideoCodec, accessUnit: Buffer, maxPayload: number): Buffer[] {
  const out: Buffer[] = [];
  for (const nal of nalUnitsOf(accessUnit)) {
    if (nal.length <= maxPayload) out.push(nal);
    else if (codec === 'h265') fragmentH265(nal, maxPayload, out);
    else fragmentH264(nal, maxPayload, out);
  }
  return out;
}

function fragmentH265(nal: Buffer, maxPayload: number, out: Buffer[]): void {
  const type = (nal[0] >> 1) & 0x3f;
  // PayloadHdr: the NAL header with type 49 (FU), F, LayerId and TID kept.
  const h0 = (nal[0] & 0x81) | (49 << 1);
  const h1 = nal[1];
  const chunk = maxPayload - 3;
  for (let at = 2; at < nal.length; at += chunk) {
    const end = Math.min(nal.length, at + chunk);
    const fu = (at === 2 ? 0x80 : 0) | (end === nal.length ? 0x40 : 0) | type;
    out.push(Buffer.concat([Buffer.from([h0, h1, fu]), nal.subarray(at, end)]));
  }
}

function fragmentH264(nal: Buffer, maxPayload: number, out: Buffer[]): void {
  const indicator = (nal[0] & 0xe0) | 28;
  const type = nal[0] & 0x1f;
  const chunk = maxPayload - 2;
  for (let at = 1; at < nal.length; at += chunk) {
    const end = Math.min(nal.length, at + chunk);
    const fu = (at === 1 ? 0x80 : 0) | (end === nal.length ? 0x40 : 0) | type;
    out.push(Buffer.concat([Buffer.from([indicator, fu]), nal.subarray(at, end)]));
  }
}

/** A viewer's RTP state: its SSRC, sequence numbers and the origin of its 90 kHz clock. */
export class RtpStream {
  private seq: number;
  private readonly tsBase: number;
  private originMs: number | undefined;
  private packetCount = 0;
  private octetCount = 0;

  constructor(
    readonly ssrc: number,
    seq: number,
    tsBase: number,
  ) {
    this.seq = seq & 0xffff;
    this.tsBase = tsBase >>> 0;
  }

  get nextSeq(): number {
    return this.seq;
  }

  /** 90 kHz from the capture time, counted from the first picture sent (its timestamp is the base). */
  timestamp(capturedAtMs: number): number {
    this.originMs ??= capturedAtMs;
    return (this.tsBase + Math.round((capturedAtMs - this.originMs) * 90)) >>> 0;
  }

  /**
   * An RTCP sender report (RFC 3550 6.4.1) for a picture captured at `capturedAtMs`: its wall-clock
   * capture time as NTP beside its RTP timestamp, which is how a receiver turns every RTP time of the
   * stream into a capture time (the hub's live view pairs the detections with the picture shown).
   */
  senderReport(capturedAtMs: number): Buffer {
    const sr = Buffer.alloc(28);
    sr[0] = 0x80; // V=2, no padding, no report blocks
    sr[1] = 200; // SR
    sr.writeUInt16BE(6, 2); // length in 32-bit words minus one
    sr.writeUInt32BE(this.ssrc, 4);
    const ntpSeconds = Math.floor(capturedAtMs / 1000) + NTP_UNIX_OFFSET_S;
    sr.writeUInt32BE(ntpSeconds >>> 0, 8);
    sr.writeUInt32BE(Math.floor(((capturedAtMs % 1000) / 1000) * 2 ** 32) >>> 0, 12);
    sr.writeUInt32BE(this.timestamp(capturedAtMs), 16);
    sr.writeUInt32BE(this.packetCount >>> 0, 20);
    sr.writeUInt32BE(this.octetCount >>> 0, 24);
    return sr;
  }

  /** The RTP packets (12-byte header + payload) of one picture. */
  packets(payloads: Buffer[], capturedAtMs: number): Buffer[] {
    const ts = this.timestamp(capturedAtMs);
    this.packetCount += payloads.length;
    this.octetCount += payloads.reduce((n, p) => n + p.length, 0);
    return payloads.map((payload, i) => {
      const header = Buffer.allocUnsafe(12);
      header[0] = 0x80;
      header[1] = (i === payloads.length - 1 ? 0x80 : 0) | PAYLOAD_TYPE;
      header.writeUInt16BE(this.seq, 2);
      header.writeUInt32BE(ts, 4);
      header.writeUInt32BE(this.ssrc, 8);
      this.seq = (this.seq + 1) & 0xffff;
      return Buffer.concat([header, payload]);
    });
  }
}
