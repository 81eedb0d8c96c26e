import type { Socket as UdpSocket } from 'node:dgram';
import type { Socket } from 'node:net';
import type { EncodedPicture } from '../../encode/src/service.js';
import { RtpStream } from './rtp-packetizer.js';
import type { StreamSource } from './stream-source.js';

export type Transport =
  | { kind: 'tcp'; rtpChannel: number; rtcpChannel: number }
  /** UDP to the RTSP connection's own peer address only (never an address the client names). */
  | { kind: 'udp'; address: string; rtpPort: number; rtcpPort: number };

export interface SessionSink {
  socket: Socket;
  udp: UdpSocket | undefined;
  /** The server's RTCP port (RTP's + 1), where its sender reports to UDP viewers come from. */
  udpRtcp?: UdpSocket | undefined;
  maxBufferBytes: number;
  /** The viewer reads too slowly: drop it (its connection), the others go on. */
  onSlow(session: RtspSession, lagBytes: number): void;
}

/**
 * One viewer of one path: its transport, its RTP stream (SSRC, sequence, 90 kHz clock from the
 * capture times) and, once playing, its subscription to the pictures. Play starts with the latest
 * GOP so the viewer's decoder shows a picture at once instead of waiting for the next keyframe.
 */
export class RtspSession {
  readonly rtp: RtpStream;
  lastSeen: number;
  private off: (() => void) | undefined;
  private closed = false;
  private reported = false;

  constructor(
    readonly id: string,
    readonly source: StreamSource,
    public transport: Transport,
    private readonly sink: SessionSink,
    ids: { ssrc: number; seq: number; tsBase: number },
    now: number,
  ) {
    this.rtp = new RtpStream(ids.ssrc, ids.seq, ids.tsBase);
    this.lastSeen = now;
  }

  get playing(): boolean {
    return this.off !== undefined;
  }

  /** Starts sending; returns the RTP-Info values of the first packet (sequence and timestamp). */
  play(): { seq: number; rtptime: number } {
    if (this.off || this.closed) return { seq: this.rtp.nextSeq, rtptime: 0 };
    const gop = this.source.stream.latestGop();
    const seq = this.rtp.nextSeq;
    const rtptime = this.rtp.timestamp(gop[0]?.capturedAtMs ?? Date.now());
    // Before the first keyframe a decoder can do nothing with a picture: wait for one.
    let started = gop.length > 0;
    let generation = gop[0]?.generation;
    const send = (picture: EncodedPicture): void => {
      if (this.closed) return;
      // A new encoder run (a restart, a profile change) starts over on its first keyframe.
      if (generation !== undefined && picture.generation !== generation) started = false;
      if (!started) {
        if (!picture.keyframe) return;
        started = true;
        generation = picture.generation;
      }
      this.send(picture);
    };
    for (const picture of gop) send(picture);
    this.off = this.source.stream.subscribe(send);
    return { seq, rtptime };
  }

  close(): void {
    this.closed = true;
    this.off?.();
    this.off = undefined;
  }

  private send(picture: EncodedPicture): void {
    // A sender report (capture time beside RTP time) before the first picture and every keyframe.
    const report = picture.keyframe || !this.reported ? this.rtp.senderReport(picture.capturedAtMs) : undefined;
    this.reported = true;
    const packets = this.rtp.packets(this.source.payloads(picture), picture.capturedAtMs);
    const t = this.transport;
    if (t.kind === 'udp') {
      const udp = this.sink.udp;
      // UDP has no back-pressure to watch: the kernel drops what the path cannot carry.
      if (this.sink.udpRtcp && report) this.sink.udpRtcp.send(report, t.rtcpPort, t.address);
      if (udp) for (const p of packets) udp.send(p, t.rtpPort, t.address);
      return;
    }
    const socket = this.sink.socket;
    if (socket.destroyed) return;
    // One write per picture: every packet with its interleaved frame header ($, channel, length).
    const parts: Buffer[] = [];
    const frame = (channel: number, p: Buffer) => {
      const h = Buffer.allocUnsafe(4);
      h[0] = 0x24;
      h[1] = channel;
      h.writeUInt16BE(p.length, 2);
      parts.push(h, p);
    };
    if (report) frame(t.rtcpChannel, report);
    for (const p of packets) frame(t.rtpChannel, p);
    socket.write(Buffer.concat(parts));
    if (socket.writableLength > this.sink.maxBufferBytes) this.sink.onSlow(this, socket.writableLength);
  }
}
