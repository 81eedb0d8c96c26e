import { randomBytes } from 'node:crypto';
import { isIPv6 } from 'node:net';
import DgramAsPromised, { type RemoteInfo, type SocketAsPromised } from 'dgram-as-promised';
import type { Logger } from 'lookout/core';
import type { MeshTimings } from './config.js';
import { encodeDatagram, type MeshMessage } from './datagram.js';
import type { MeshNetworks } from './mesh-networks.js';
import { MeshVerifier, type MeshNodeCounters } from './mesh-verifier.js';
import { PeerTable, type Peer, type PeerAnnounce, type Transition } from './peer-table.js';
import { SenderRate } from './sender-rate.js';

export interface MeshNodeOptions {
  deviceId: string;
  host: string;
  port: number;
  key: Buffer;
  timings: MeshTimings;
  maxPeers: number;
  maxRatePerSender: number;
  /** Where a datagram may come from (a known peer's own address aside): unicast inside MESH_NETWORKS. */
  networks: MeshNetworks;
  /** The sidecar's port as peers should learn it (null while it does not listen). */
  sidecarPort(): number | null;
  /** Wall clock (ms): datagram timestamps (the replay window is reckoned against the sender's) and last seen as shown. */
  now(): number;
  /** Monotonic clock (ms, fractional): peer states, greeting spacing, rate windows, round-trip times. Default performance.now. */
  monotonic?: () => number;
  log: Logger;
  onTransition?: (t: Transition) => void;
}

/**
 * One device's end of the mesh: a UDP socket on the listen host, the peer table, heartbeats out
 * (`tick`, called on the heartbeat interval) and signed acks back. Every datagram in is rate-checked
 * per sender, then verified (MAC, fields, self, addressed to us, source, window, sequence); only then
 * does it touch the table. Every datagram out names the peer it is for.
 */
export class MeshNode {
  readonly table: PeerTable;
  readonly verifier: MeshVerifier;
  /** Random per start: peers keep a separate sequence per boot, so ours can begin at 1 again. */
  readonly boot = randomBytes(9).toString('base64url');
  private seq = 0;
  private socket: SocketAsPromised | undefined;
  private boundPort: number | null = null;
  private closed = false;
  private readonly rate: SenderRate;
  private readonly monotonic: () => number;

  constructor(private readonly o: MeshNodeOptions) {
    this.monotonic = o.monotonic ?? (() => performance.now());
    this.table = new PeerTable({
      monotonic: this.monotonic,
      wallNow: () => o.now(),
      suspectMs: o.timings.suspectMs,
      downMs: o.timings.downMs,
      maxPeers: o.maxPeers,
    });
    // Replay state for every peer the table can hold and as many again (senders not yet in it).
    this.verifier = new MeshVerifier(o.deviceId, o.key, o.timings.windowMs, 2 * o.maxPeers);
    this.rate = new SenderRate(o.maxRatePerSender);
  }

  get counters(): MeshNodeCounters {
    return this.verifier.counters;
  }

  /** The bound port; null before `start` and after `close`. */
  get port(): number | null {
    return this.closed ? null : this.boundPort;
  }

  async start(): Promise<number> {
    // The callback form keeps one 'message' listener for good (recv() would miss datagrams arriving while we send).
    const socket = DgramAsPromised.createSocket({ type: isIPv6(this.o.host) ? 'udp6' : 'udp4' }, (msg, rinfo) => this.receive(msg, rinfo));
    socket.socket.on('error', (err) => this.o.log.warn({ err: err.message }, 'mesh socket error'));
    this.socket = socket;
    const { port } = await socket.bind({ port: this.o.port, address: this.o.host, exclusive: true });
    this.boundPort = port;
    return port;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.socket?.close().catch(() => undefined);
  }

  /**
   * A peer from its hello or MESH_PEERS; a new or moved one is greeted, at most once per heartbeat
   * (a hello flapping between addresses costs one datagram a heartbeat, the next tick reaches the new address anyway).
   */
  addPeer(a: PeerAnnounce): void {
    const outcome = this.table.announce(a);
    if (outcome === 'refused') {
      this.counters.peers_refused += 1;
      this.o.log.warn({ peer: a.deviceId, max: this.o.maxPeers }, 'mesh peer table full: peer refused');
      return;
    }
    const peer = this.table.get(a.deviceId);
    if ((outcome === 'added' || outcome === 'updated') && peer && this.mayGreet(peer)) this.greet(peer, 'hello');
  }

  /**
   * Heartbeat interval: peers found by hello and never heard within the down time dropped, states
   * swept (transitions reported), one heartbeat to every peer, down ones included so they can return.
   */
  tick(): void {
    for (const deviceId of this.table.dropUnheard()) {
      this.counters.peers_dropped_unheard += 1;
      this.o.log.info({ peer: deviceId, down_ms: this.o.timings.downMs }, `mesh peer ${deviceId} never answered: dropped`);
    }
    for (const t of this.table.sweep()) this.o.onTransition?.(t);
    for (const peer of this.table.list()) {
      const seq = this.greet(peer, 'hb');
      if (seq !== null) peer.pendingHeartbeat = { seq, sentAt: this.monotonic() };
    }
  }

  /** No unasked-for datagram to this peer within the last heartbeat. */
  private mayGreet(peer: Peer): boolean {
    return peer.greetedAt === null || this.monotonic() - peer.greetedAt >= this.o.timings.heartbeatMs;
  }

  private greet(peer: Peer, t: 'hello' | 'hb'): number | null {
    peer.greetedAt = this.monotonic();
    return this.send(t, peer.deviceId, peer.address, peer.meshPort);
  }

  /** One received datagram (public for tests and the bench: the socket calls it). */
  receive(datagram: Buffer, rinfo: Pick<RemoteInfo, 'address' | 'port'>): void {
    if (this.closed) return;
    // Per address and port: simulated devices side by side share 127.0.0.1, each with its own socket.
    if (!this.rate.allow(`${rinfo.address}:${rinfo.port}`, this.monotonic())) {
      this.counters.dropped_rate_limited += 1;
      return;
    }
    const message = this.verifier.verify(datagram, this.o.now(), (m) => this.sourceAdmitted(m, rinfo.address));
    if (!message) return;
    this.believe(message, rinfo);
  }

  /**
   * A datagram may move a peer (or add one) only from a unicast address inside the mesh networks;
   * a configured peer beyond them is still heard at the address the operator gave. The peer's own
   * address is asked first: it is the common case, and a map lookup where the network test is not.
   */
  private sourceAdmitted(m: MeshMessage, address: string): boolean {
    return this.table.get(m.from)?.address === address || this.o.networks.admits(address);
  }

  private believe(m: MeshMessage, rinfo: Pick<RemoteInfo, 'address' | 'port'>): void {
    // A key holder we did not know (it heard our hello first, or started after our hello went out) joins as if by hello.
    if (m.t !== 'ack' && !this.table.get(m.from))
      this.addPeer({ deviceId: m.from, address: rinfo.address, meshPort: rinfo.port, sidecarPort: m.sidecar_port, source: 'hello' });
    const peer = this.table.heard(m.from, rinfo.address, rinfo.port, m.sidecar_port);
    if (m.t === 'ack') {
      const pending = peer?.pendingHeartbeat;
      if (pending && m.echo === pending.seq) {
        peer.rttMs = Math.round((this.monotonic() - pending.sentAt) * 1000) / 1000;
        peer.pendingHeartbeat = null;
      }
      return;
    }
    this.send('ack', m.from, rinfo.address, rinfo.port, m.seq);
  }

  /** Signs for `to` and sends; returns the seq used (null when nothing could be sent). Failures are counted, never thrown. */
  private send(t: MeshMessage['t'], to: string, address: string, port: number, echo?: number): number | null {
    const socket = this.socket;
    if (!socket || this.closed || this.boundPort === null) return null;
    this.seq += 1;
    const message: MeshMessage = {
      t,
      from: this.o.deviceId,
      to,
      seq: this.seq,
      ts: this.o.now(),
      boot: this.boot,
      ...(echo !== undefined ? { echo } : {}),
      mesh_port: this.boundPort,
      sidecar_port: this.o.sidecarPort(),
    };
    const datagram = encodeDatagram(message, this.o.key);
    this.counters.sent += 1;
    socket.send(datagram, port, address).catch((err: Error) => {
      this.counters.send_errors += 1;
      this.o.log.debug({ err: err.message, address, port }, 'mesh datagram not sent');
    });
    return this.seq;
  }
}
