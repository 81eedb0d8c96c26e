import { randomBytes, randomInt } from 'node:crypto';
import type { Socket as UdpSocket } from 'node:dgram';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext, type SecureContextOptions } from 'node:tls';
import { SERVED_TLS_CONTEXT } from 'lookout/lib/tls';
import type { Logger } from 'lookout/core';
import { ConnectionLimits } from './connection-limits.js';
import type { DigestAuth } from './digest-auth.js';
import { RtspReader, rtspResponse, type RtspRequest } from './rtsp-message.js';
import { PreSessionClock } from './pre-session-clock.js';
import { RtspSession, type SessionSink, type Transport } from './rtsp-session.js';
import { sdpFor, TRACK_CONTROL } from './sdp.js';
import type { StreamSource } from './stream-source.js';
import { bindUdpPair } from './udp-ports.js';

export interface RtspServerOptions {
  host: string;
  port: number;
  sources: StreamSource[];
  /** Undefined: no credentials asked (the plugin then listens on loopback only). */
  auth: DigestAuth | undefined;
  maxSessions: number;
  /** Connections at once, in all (default: two per session and eight that only ask, OPTIONS or DESCRIBE). */
  maxConnections?: number;
  /** Connections at once from one remote address: below maxConnections, so one address cannot take every slot. */
  maxConnectionsPerAddress: number;
  maxBufferBytes: number;
  sessionTimeoutMs: number;
  /** How long a connection without a session may take (its own time, not the server's answers) before it is closed. */
  preSessionTimeoutMs: number;
  firstKeyframeWaitMs: number;
  /**
   * RTSPS beside RTSP: a second listener on `port` whose connections speak TLS (the device
   * certificate), then the same requests, sign-in and bounds; RTP only interleaved on the connection.
   */
  tls?: RtspsOptions;
  log?: Pick<Logger, 'info' | 'warn'>;
  now?: () => number;
}

export interface RtspsOptions {
  port: number;
  cert: Buffer;
  key: Buffer;
  /** A connection that has not finished its TLS handshake by then is closed (a stranger's half-open socket). */
  handshakeTimeoutMs: number;
}

/** An answer, and what to do once it is written (PLAY starts the pictures after its reply). */
interface Reply {
  response: Buffer;
  after?: () => void;
}

const METHODS = 'OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER, SET_PARAMETER';
const SERVER = 'Lookout RTSP';

interface Connection {
  /** The plain socket, or the TLS socket over it (RTSPS). */
  socket: Socket;
  /** `rtsps` over TLS: the scheme its request URLs carry, and RTP only interleaved. */
  scheme: 'rtsp' | 'rtsps';
  /** The peer's address: where UDP may go, and nowhere else. */
  address: string;
  reader: RtspReader;
  sessions: Map<string, RtspSession>;
  sink: SessionSink;
  /** Requests are answered one at a time, in order (a DESCRIBE may wait for the first keyframe). */
  queue: Promise<void>;
  /** Requests read and not yet answered: while any is, the pre-session clock is paused. */
  pending: number;
  /** Whether a whole request ever came: a connection that never sent one is the first to go when all slots are taken. */
  asked: boolean;
  clock: PreSessionClock;
  abort: AbortController;
}

/**
 * RTSP/1.0 (RFC 2326) for the preview: OPTIONS, DESCRIBE (SDP with the parameter sets), SETUP (RTP
 * over the RTSP connection, interleaved, or UDP to the connection's peer), PLAY (from the latest
 * keyframe), TEARDOWN, GET_PARAMETER/SET_PARAMETER as keep-alives. Sessions belong to the
 * connection that made them and end with it, on TEARDOWN, or after the timeout without a sign of
 * life. Bounded sessions; a viewer that lags is dropped; a malformed request gets 400 and only its
 * own connection is closed. Before a session a stranger is bounded too: connections in all and per
 * address, the time a connection may stay without a session, the size of a request's head.
 */
export class RtspServer {
  private readonly tcp: Server;
  private readonly tlsListener: Server | undefined;
  private secureContext: SecureContext | undefined;
  private handshakeTimedOut = 0;
  private actualTlsPort = 0;
  private udp: { rtp: UdpSocket; rtcp: UdpSocket } | undefined;
  private readonly connections = new Set<Connection>();
  private readonly sessions = new Map<string, RtspSession>();
  private readonly limits: ConnectionLimits;
  private preSessionClosed = 0;
  private sweep: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private slowDropped = 0;
  private actualPort = 0;

  constructor(private readonly o: RtspServerOptions) {
    this.now = o.now ?? Date.now;
    this.tcp = createServer((socket) => this.accept(socket, 'rtsp'));
    if (o.tls) {
      // A plain listener whose sockets are wrapped here (not a tls.Server): the connection bounds
      // take their slot before the handshake, so half-open TLS sockets count like any other.
      this.secureContext = createSecureContext({ cert: o.tls.cert, key: o.tls.key, ...SERVED_TLS_CONTEXT });
      this.tlsListener = createServer((socket) => this.accept(socket, 'rtsps'));
    }
    // Enough connections for every session plus a few that only ask (OPTIONS, DESCRIBE); one
    // address gets fewer than all of them, whatever it is configured to (at least one stays for the others).
    const total = o.maxConnections ?? o.maxSessions * 2 + 8;
    this.limits = new ConnectionLimits(total, Math.max(1, Math.min(o.maxConnectionsPerAddress, total - 1)));
  }

  get port(): number {
    return this.actualPort;
  }

  /** The RTSPS port once listening (0 without RTSPS). */
  get tlsPort(): number {
    return this.actualTlsPort;
  }

  /** Serves another certificate to new RTSPS connections (a renewal); open ones keep theirs. */
  setSecureContext(options: SecureContextOptions): void {
    this.secureContext = createSecureContext({ ...options, ...SERVED_TLS_CONTEXT });
  }

  async listen(): Promise<number> {
    this.actualPort = await listenOn(this.tcp, this.o.port, this.o.host);
    if (this.tlsListener && this.o.tls) {
      try {
        this.actualTlsPort = await listenOn(this.tlsListener, this.o.tls.port, this.o.host);
      } catch (err) {
        await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
        throw err;
      }
    }
    this.udp = await bindUdpPair(this.o.host);
    if (this.udp) {
      // RTCP receiver reports keep a UDP session alive; nothing else is read.
      this.udp.rtcp.on('message', (_msg, from) => this.udpSignOfLife(from.address, from.port));
      this.udp.rtp.on('message', (_msg, from) => this.udpSignOfLife(from.address, from.port - 1));
      for (const s of [this.udp.rtp, this.udp.rtcp]) s.on('error', (err) => this.o.log?.warn({ err: err.message }, 'RTSP UDP socket error'));
    } else this.o.log?.warn({}, 'no UDP port pair for RTP: RTSP offers TCP (interleaved) only');
    this.sweep = setInterval(() => this.expire(), Math.min(5000, this.o.sessionTimeoutMs / 2));
    this.sweep.unref();
    return this.actualPort;
  }

  viewers(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.playing) n++;
    return n;
  }

  /** Sessions now (set up, playing or not) by transport. */
  sessionsByTransport(): { tcp: number; udp: number } {
    const out = { tcp: 0, udp: 0 };
    for (const s of this.sessions.values()) out[s.transport.kind]++;
    return out;
  }

  stats(): {
    sessions: number;
    viewers: number;
    connections: number;
    slow_dropped: number;
    refused: { total: number; per_address: number };
    evicted: number;
    pre_session_closed: number;
    tls_handshake_timed_out: number;
    udp_ports: [number, number] | null;
  } {
    const udp = this.udp ? ([this.udp.rtp.address().port, this.udp.rtcp.address().port] as [number, number]) : null;
    return {
      sessions: this.sessions.size,
      viewers: this.viewers(),
      connections: this.connections.size,
      slow_dropped: this.slowDropped,
      refused: { total: this.limits.refused.total, per_address: this.limits.refused.perAddress },
      evicted: this.limits.evicted,
      pre_session_closed: this.preSessionClosed,
      tls_handshake_timed_out: this.handshakeTimedOut,
      udp_ports: udp,
    };
  }

  async close(): Promise<void> {
    if (this.sweep) clearInterval(this.sweep);
    for (const c of this.connections) this.drop(c);
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
    const tls = this.tlsListener;
    if (tls?.listening) await new Promise<void>((resolve) => tls.close(() => resolve()));
    if (this.udp) for (const s of [this.udp.rtp, this.udp.rtcp]) s.close();
    this.udp = undefined;
  }

  private accept(raw: Socket, scheme: 'rtsp' | 'rtsps'): void {
    const address = (raw.remoteAddress ?? '').replace(/^::ffff:/, '');
    // Refused before a byte is read: no slot, no buffer, no timer (and for RTSPS no handshake).
    if (!this.admit(address)) {
      raw.on('error', () => undefined);
      raw.destroy();
      return;
    }
    raw.setNoDelay(true);
    const socket = scheme === 'rtsps' ? this.secure(raw, address) : raw;
    const conn: Connection = {
      socket,
      scheme,
      address,
      reader: new RtspReader(),
      sessions: new Map(),
      queue: Promise.resolve(),
      pending: 0,
      asked: false,
      clock: new PreSessionClock(
        this.o.preSessionTimeoutMs,
        () => {
          this.preSessionClosed++;
          this.o.log?.info({ peer: address, afterMs: this.o.preSessionTimeoutMs }, 'RTSP connection closed: no session within the pre-session timeout');
          this.drop(conn);
        },
        this.now,
      ),
      abort: new AbortController(),
      sink: {
        socket,
        // Over RTSPS the pictures stay inside the TLS connection: no UDP.
        udp: scheme === 'rtsp' ? this.udp?.rtp : undefined,
        udpRtcp: scheme === 'rtsp' ? this.udp?.rtcp : undefined,
        maxBufferBytes: this.o.maxBufferBytes,
        onSlow: (session, lag) => {
          this.slowDropped++;
          this.o.log?.warn({ session: session.id, lagBytes: lag }, 'RTSP viewer dropped: it reads slower than the stream');
          this.drop(conn);
        },
      },
    };
    this.connections.add(conn);
    socket.on('data', (data: Buffer) => this.received(conn, data));
    socket.on('error', () => undefined);
    socket.on('close', () => this.drop(conn));
    conn.clock.run();
  }

  /**
   * The TLS side of an RTSPS connection (the server's end of the handshake). A socket that has not
   * finished it within the handshake limit is closed; a failed handshake closes it at once.
   */
  private secure(raw: Socket, address: string): TLSSocket {
    const tls = this.o.tls as RtspsOptions;
    const socket = new TLSSocket(raw, { isServer: true, secureContext: this.secureContext });
    const timer = setTimeout(() => {
      this.handshakeTimedOut++;
      this.o.log?.info({ peer: address, afterMs: tls.handshakeTimeoutMs }, 'RTSPS connection closed: no TLS handshake within the limit');
      socket.destroy();
    }, tls.handshakeTimeoutMs);
    timer.unref();
    socket.once('secure', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
    return socket;
  }

  private received(conn: Connection, data: Buffer): void {
    for (const item of conn.reader.push(data)) {
      if (item.kind === 'interleaved') {
        for (const s of conn.sessions.values()) s.lastSeen = this.now();
        continue;
      }
      if (item.kind === 'malformed') {
        const reply = rtspResponse(400, { Server: SERVER });
        conn.queue = conn.queue.then(() => {
          if (!conn.socket.destroyed) conn.socket.end(reply);
        });
        this.o.log?.warn({ reason: item.reason, peer: conn.address }, 'malformed RTSP request: 400, connection closed');
        return;
      }
      const request = item.request;
      // Any request naming one of this connection's sessions is a sign of life (OPTIONS and
      // GET_PARAMETER keep-alives included), whatever its answer.
      const named = conn.sessions.get(request.headers.get('session')?.split(';')[0].trim() ?? '');
      if (named) named.lastSeen = this.now();
      conn.pending++;
      conn.asked = true;
      conn.clock.pause();
      conn.queue = conn.queue.then(async () => {
        if (conn.socket.destroyed) return;
        const reply: Reply = await this.answer(conn, request).catch((err: Error): Reply => {
          this.o.log?.warn({ err: err.message, method: request.method }, 'RTSP request failed');
          return { response: rtspResponse(500, { CSeq: request.headers.get('cseq'), Server: SERVER }) };
        });
        if (!conn.socket.destroyed) conn.socket.write(reply.response);
        reply.after?.();
        conn.pending--;
        this.waitForClient(conn);
      });
    }
  }

  /**
   * A slot for a new connection from `address`. With every slot taken, the oldest connection that
   * has not sent one whole request (idle sockets, a request dripped byte by byte) makes room: held
   * slots cannot lock newcomers out, and a client that asks at once is never the one to go.
   */
  private admit(address: string): boolean {
    if (this.limits.admit(address, false) === undefined) return true;
    if (this.limits.admit(address, false) === 'full') {
      for (const c of this.connections) {
        if (c.asked || c.sessions.size > 0) continue;
        this.limits.evicted++;
        this.drop(c);
        break;
      }
    }
    return this.limits.admit(address) === undefined;
  }

  /** Nothing left to answer: a connection without a session spends its pre-session time from here. */
  private waitForClient(conn: Connection): void {
    if (conn.pending === 0 && conn.sessions.size === 0 && this.connections.has(conn)) conn.clock.run();
  }

  private async answer(conn: Connection, req: RtspRequest): Promise<Reply> {
    const cseq = req.headers.get('cseq');
    const base: Record<string, string | number | undefined> = { CSeq: cseq, Server: SERVER };
    const reply = (status: number, headers: Record<string, string | number | undefined> = {}, body = ''): { response: Buffer } => ({
      response: rtspResponse(status, { ...base, ...headers }, body),
    });
    if (cseq === undefined || !/^\d{1,10}$/.test(cseq)) return reply(400);
    if (req.method === 'OPTIONS') return reply(200, { Public: METHODS });

    if (this.o.auth) {
      const verdict = this.o.auth.verify(req.method, req.uri, req.headers.get('authorization'), conn);
      if (verdict !== 'ok') return reply(401, { 'WWW-Authenticate': this.o.auth.challenge(verdict === 'stale', conn) });
    }

    const sessionId = req.headers.get('session')?.split(';')[0].trim();
    const session = sessionId ? conn.sessions.get(sessionId) : undefined;
    if (session) session.lastSeen = this.now();
    const sessionHeader = (s: RtspSession): string => `${s.id};timeout=${Math.round(this.o.sessionTimeoutMs / 1000)}`;

    switch (req.method) {
      case 'DESCRIBE': {
        const target = this.resolve(req.uri, conn.scheme);
        if (!target) return reply(404);
        const params = await target.source.waitForParameterSets(this.o.firstKeyframeWaitMs, conn.abort.signal);
        if (!params) return reply(503, { 'Retry-After': 5 });
        const sdp = sdpFor({ codec: target.source.codec, params, fps: target.source.stream.fps, host: this.o.host, sessionId: String(randomInt(1, 2 ** 31)) });
        return reply(200, { 'Content-Base': `${target.base}/`, 'Content-Type': 'application/sdp' }, sdp);
      }
      case 'SETUP': {
        const target = this.resolve(req.uri, conn.scheme);
        if (!target) return reply(404);
        if (sessionId && !session) return reply(454);
        if (session && session.source !== target.source) return reply(459);
        const transport = this.transportFor(conn, req.headers.get('transport') ?? '');
        if (!transport) return reply(461);
        if (session) {
          if (session.playing) return reply(455);
          session.transport = transport.transport;
          return reply(200, { Transport: transport.reply(session.rtp.ssrc), Session: sessionHeader(session) });
        }
        if (this.sessions.size >= this.o.maxSessions) return reply(453);
        const id = randomBytes(8).toString('hex').toUpperCase();
        const created = new RtspSession(
          id,
          target.source,
          transport.transport,
          conn.sink,
          { ssrc: randomInt(1, 2 ** 32 - 1), seq: randomInt(0, 0x10000), tsBase: randomInt(0, 2 ** 32 - 1) },
          this.now(),
        );
        conn.sessions.set(id, created);
        this.sessions.set(id, created);
        conn.clock.reset();
        return reply(200, { Transport: transport.reply(created.rtp.ssrc), Session: sessionHeader(created) });
      }
      case 'PLAY': {
        if (!session) return reply(sessionId ? 454 : 455);
        const base = this.resolve(req.uri, conn.scheme)?.base ?? req.uri.replace(/\/+$/, '');
        // The reply goes first, then the pictures: a client reads the RTP-Info before the first packet.
        let info = { seq: session.rtp.nextSeq, rtptime: 0 };
        const peek = session.playing ? undefined : session.source.stream.latestGop()[0];
        if (peek) info = { seq: session.rtp.nextSeq, rtptime: session.rtp.timestamp(peek.capturedAtMs) };
        return {
          ...reply(200, {
            Range: 'npt=0.000-',
            Session: sessionHeader(session),
            'RTP-Info': `url=${base}/${TRACK_CONTROL};seq=${info.seq};rtptime=${info.rtptime}`,
          }),
          after: () => {
            session.play();
            this.o.log?.info({ session: session.id, path: session.source.path, transport: session.transport.kind, peer: conn.address }, 'RTSP viewer playing');
          },
        };
      }
      case 'TEARDOWN': {
        if (!session) return reply(sessionId ? 454 : 455);
        this.endSession(conn, session);
        return reply(200);
      }
      case 'GET_PARAMETER':
      case 'SET_PARAMETER':
        if (sessionId && !session) return reply(454);
        return reply(200, session ? { Session: sessionHeader(session) } : {});
      case 'PAUSE':
      case 'ANNOUNCE':
      case 'RECORD':
      case 'REDIRECT':
        return reply(405, { Allow: METHODS });
      default:
        return reply(501, { Public: METHODS });
    }
  }

  /** The stream a request URL names (the stream itself or its track), with the stream's absolute URL. */
  private resolve(uri: string, scheme: Connection['scheme']): { source: StreamSource; base: string } | undefined {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return undefined;
    }
    if (url.protocol !== `${scheme}:`) return undefined;
    let path = url.pathname.replace(/\/+$/, '');
    if (path.endsWith(`/${TRACK_CONTROL}`)) path = path.slice(0, -TRACK_CONTROL.length - 1);
    const source = this.o.sources.find((s) => s.path === path);
    if (!source) return undefined;
    return { source, base: `${scheme}://${url.host}${path}` };
  }

  private transportFor(conn: Connection, header: string): { transport: Transport; reply(ssrc: number): string } | undefined {
    const ssrcHex = (ssrc: number): string => ssrc.toString(16).toUpperCase().padStart(8, '0');
    for (const spec of header.split(',')) {
      const parts = spec
        .trim()
        .split(';')
        .map((p) => p.trim());
      const profile = parts[0].toUpperCase();
      const params = new Map(parts.slice(1).map((p) => [p.split('=')[0].toLowerCase(), p.split('=')[1] ?? '']));
      if (params.has('multicast') || (params.has('destination') && params.get('destination') !== conn.address)) continue;
      if (profile === 'RTP/AVP/TCP') {
        const used = new Set([...conn.sessions.values()].flatMap((s) => (s.transport.kind === 'tcp' ? [s.transport.rtpChannel, s.transport.rtcpChannel] : [])));
        let channels = parseRange(params.get('interleaved'), 255);
        if (!channels) {
          let c = 0;
          while (used.has(c) || used.has(c + 1)) c += 2;
          channels = [c, c + 1];
        }
        const [rtpChannel, rtcpChannel] = channels;
        return {
          transport: { kind: 'tcp', rtpChannel, rtcpChannel },
          reply: (ssrc) => `RTP/AVP/TCP;unicast;interleaved=${rtpChannel}-${rtcpChannel};ssrc=${ssrcHex(ssrc)}`,
        };
      }
      // UDP would carry the pictures outside the TLS connection: over RTSPS a UDP-only SETUP gets 461.
      if ((profile === 'RTP/AVP' || profile === 'RTP/AVP/UDP') && this.udp && conn.scheme === 'rtsp') {
        const ports = parseRange(params.get('client_port'), 65_535);
        if (!ports || ports[0] === 0) continue;
        const [rtpPort, rtcpPort] = ports;
        const server = [this.udp.rtp.address().port, this.udp.rtcp.address().port];
        return {
          transport: { kind: 'udp', address: conn.address, rtpPort, rtcpPort },
          reply: (ssrc) => `RTP/AVP;unicast;client_port=${rtpPort}-${rtcpPort};server_port=${server[0]}-${server[1]};ssrc=${ssrcHex(ssrc)}`,
        };
      }
    }
    return undefined;
  }

  private udpSignOfLife(address: string, rtpPort: number): void {
    const from = address.replace(/^::ffff:/, '');
    for (const s of this.sessions.values()) {
      const t = s.transport;
      if (t.kind === 'udp' && t.address === from && (t.rtpPort === rtpPort || t.rtcpPort === rtpPort + 1)) s.lastSeen = this.now();
    }
  }

  private expire(): void {
    const limit = this.now() - this.o.sessionTimeoutMs;
    for (const conn of this.connections) {
      for (const s of conn.sessions.values()) {
        // A TCP viewer that takes every byte sent to it is watching: nothing waits in its socket.
        // One that stops reading keeps a backlog and times out (or is dropped as slow before).
        if (s.playing && s.transport.kind === 'tcp' && conn.socket.writableLength === 0) s.lastSeen = this.now();
        if (s.lastSeen < limit) {
          this.o.log?.info({ session: s.id }, 'RTSP session timed out');
          this.endSession(conn, s);
        }
      }
    }
  }

  private endSession(conn: Connection, session: RtspSession): void {
    session.close();
    conn.sessions.delete(session.id);
    this.sessions.delete(session.id);
    this.waitForClient(conn);
  }

  private drop(conn: Connection): void {
    if (!this.connections.delete(conn)) return;
    conn.clock.stop();
    this.limits.release(conn.address);
    conn.abort.abort();
    for (const s of [...conn.sessions.values()]) this.endSession(conn, s);
    conn.socket.destroy();
  }
}

/** Listens and says the port it got. */
function listenOn(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** `a-b` (or `a`, meaning a and a+1) within 0..max. */
function parseRange(text: string | undefined, max: number): [number, number] | undefined {
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text ?? '');
  if (!m) return undefined;
  const a = Number(m[1]);
  const b = m[2] !== undefined ? Number(m[2]) : a + 1;
  if (a > max || b > max) return undefined;
  return [a, b];
}
