import { randomBytes } from 'node:crypto';
import { isIPv6 } from 'node:net';
import DgramAsPromised, { type RemoteInfo, type SocketAsPromised } from 'dgram-as-promised';
import { KeyedRateLimiter } from 'lookout/lib/limits';
import type { Logger } from 'lookout/core';
import type { MeshTimings } from './config.js';
import { encodeIntroduction, encodeSealed, type MeshMessage } from './datagram.js';
import type { MeshIdentity } from './mesh-identity.js';
import type { MeshNetworks } from './mesh-networks.js';
import { MeshVerifier, type MeshNodeCounters, type SenderKnowledge, type Verified } from './mesh-verifier.js';
import { PeerTable, type Peer, type PeerAnnounce, type Transition } from './peer-table.js';

export interface MeshNodeOptions {
  deviceId: string;
  host: string;
  port: number;
  /** The fleet mesh key: introductions are MACed under it, and it salts every pair key (the fleet's, no other's). */
  key: Buffer;
  /** The device certificate and key, and the fleet CA: who we are to peers, and how we know who they are. */
  identity: MeshIdentity;
  timings: MeshTimings;
  maxPeers: number;
  /** Datagrams a second one source address may have read (all its ports together; as many back to back). */
  maxRatePerSender: number;
  /** Where a datagram may come from (a known peer's own address aside): unicast inside MESH_NETWORKS. */
  networks: MeshNetworks;
  /** The sidecar's port as peers should learn it (null while it does not listen). */
  sidecarPort(): number | null;
  /** Wall clock (ms): datagram timestamps (the replay window is reckoned against the sender's) and last seen as shown. */
  now(): number;
  /** Monotonic clock (ms, fractional): peer states, greeting spacing, sender rates, round-trip times. Default performance.now. */
  monotonic?: () => number;
  log: Logger;
  onTransition?: (t: Transition) => void;
}

/**
 * One device's end of the mesh: a UDP socket on the listen host, the peer table, heartbeats out
 * (`tick`, called on the heartbeat interval) and acks back. Every datagram in is rate-checked per
 * source address (before any MAC: a sender's 2 000 ports are one sender), then verified (mesh-verifier);
 * only then does it touch the table. Every datagram out names the peer it is for.
 *
 * Peers come only from what the fleet vouches for: the registry (MESH_PEERS), hellos on the bus
 * (`addPeer`; the broker lets a device publish only its own devices/<id>/hello), and introductions
 * carrying a fleet-CA certificate issued to the id they claim, signed with its key. An id nobody
 * vouched for (fake-0…99) never enters the table. An introduction sets up the pair key; heartbeats and
 * acks are sealed under it, so no other device can speak for its sender.
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
  /**
   * Per source address, checked before any work is done on a datagram: a flooding sender costs a map
   * lookup per packet, not an HMAC. At most 1 024 addresses are tracked, so spoofed sources cannot grow it.
   */
  private readonly rate: KeyedRateLimiter;
  private readonly monotonic: () => number;
  /**
   * Devices the registry or the bus vouched for, with where they said they are (latest first, bounded):
   * a peer dropped for silence is let back in when it introduces itself again, and only these may.
   */
  private readonly vouched = new Map<string, PeerAnnounce & { introductions: Map<string, { startMs: number; count: number }> }>();
  private readonly knowledge: SenderKnowledge;
  /** Introductions from devices not vouched for yet, per source address and heartbeat. */
  private readonly strangers = new Map<string, { startMs: number; count: number }>();

  constructor(private readonly o: MeshNodeOptions) {
    this.monotonic = o.monotonic ?? (() => performance.now());
    this.table = new PeerTable({
      monotonic: this.monotonic,
      wallNow: () => o.now(),
      suspectMs: o.timings.suspectMs,
      downMs: o.timings.downMs,
      dropMs: o.timings.dropMs,
      maxPeers: o.maxPeers,
    });
    // Replay state for every peer the table can hold and as many again (vouched senders not yet in it).
    this.verifier = new MeshVerifier(o.identity, o.key, o.timings.windowMs, 2 * o.maxPeers);
    this.rate = new KeyedRateLimiter({ burst: o.maxRatePerSender, perSecond: o.maxRatePerSender, maxKeys: 1024 });
    this.knowledge = {
      pairKey: (sender) => this.table.get(sender)?.pairKey ?? null,
      mayIntroduce: (sender, address) => this.mayIntroduce(sender, address),
      // A datagram may move a peer (or bring one back) only from a unicast address inside the mesh
      // networks; a configured peer beyond them is still heard at the address the operator gave. The
      // peer's own address is asked first: the common case, and a map lookup where the network test is not.
      sourceAdmitted: (m, address) => this.table.get(m.from)?.address === address || this.o.networks.admits(address),
    };
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
    this.vouch(a);
    const outcome = this.table.announce(a);
    if (outcome === 'refused') {
      this.counters.peers_refused += 1;
      this.o.log.warn({ peer: a.deviceId, max: this.o.maxPeers }, 'mesh peer table full: peer refused');
      return;
    }
    const peer = this.table.get(a.deviceId);
    if ((outcome === 'added' || outcome === 'updated') && peer && this.mayGreet(peer)) this.greet(peer);
  }

  private vouch(a: PeerAnnounce): void {
    const known = this.vouched.get(a.deviceId);
    this.vouched.delete(a.deviceId);
    this.vouched.set(a.deviceId, {
      ...a,
      source: known?.source === 'config' ? 'config' : a.source,
      introductions: known?.introductions ?? new Map<string, { startMs: number; count: number }>(),
    });
    while (this.vouched.size > 4 * this.o.maxPeers) this.vouched.delete(this.vouched.keys().next().value!);
  }

  /**
   * Introductions cost a MAC and a signature check each, so they are bounded per heartbeat and source
   * address: two for each vouched device (its greeting and its answer to ours; per address, so junk
   * sent under its id from elsewhere does not use up its turns), and two in all for devices not vouched
   * yet (a newcomer needs one). A fleet-key holder flooding introductions gets a few checks a heartbeat.
   */
  private mayIntroduce(sender: string, address: string): 'ok' | 'unknown' | 'over_budget' {
    const v = this.vouched.get(sender);
    const windows = v ? v.introductions : this.strangers;
    const now = this.monotonic();
    let w = windows.get(address);
    if (!w || now - w.startMs >= this.o.timings.heartbeatMs) {
      windows.delete(address);
      w = { startMs: now, count: 0 };
      windows.set(address, w);
      while (windows.size > (v ? 8 : 1024)) windows.delete(windows.keys().next().value!);
    }
    w.count += 1;
    return w.count <= 2 ? 'ok' : 'over_budget';
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
    for (const deviceId of this.table.dropSilent()) {
      this.counters.peers_dropped_silent += 1;
      this.o.log.info({ peer: deviceId, drop_ms: this.o.timings.dropMs }, `mesh peer ${deviceId} silent too long: dropped`);
    }
    for (const t of this.table.sweep()) this.o.onTransition?.(t);
    for (const peer of this.table.list()) this.greet(peer);
  }

  /** No unasked-for datagram to this peer within the last heartbeat. */
  private mayGreet(peer: Peer): boolean {
    return peer.greetedAt === null || this.monotonic() - peer.greetedAt >= this.o.timings.heartbeatMs;
  }

  /**
   * A heartbeat sealed under the pair key; an introduction instead while there is no pair key, or while
   * the peer is down (it may have restarted with a new key, or dropped us: introducing ourselves again
   * sets the key up anew from either end).
   */
  private greet(peer: Peer): void {
    peer.greetedAt = this.monotonic();
    if (!peer.pairKey || this.table.stateOf(peer) === 'down') {
      this.send({ t: 'hello', known: peer.pairKey !== null }, peer, peer.address, peer.meshPort);
      return;
    }
    const seq = this.send({ t: 'hb' }, peer, peer.address, peer.meshPort);
    if (seq !== null) peer.pendingHeartbeat = { seq, sentAt: this.monotonic() };
  }

  /** One received datagram (public for tests and the bench: the socket calls it). */
  receive(datagram: Buffer, rinfo: Pick<RemoteInfo, 'address' | 'port'>): void {
    if (this.closed) return;
    // Per source address, whatever the port: ports cost an attacker nothing (2 000 of them were 2 000
    // senders, each computing HMACs at the full rate). Devices side by side on one address share it.
    if (this.rate.take(rinfo.address, this.monotonic()) === false) {
      this.counters.dropped_rate_limited += 1;
      return;
    }
    const verified = this.verifier.verify(datagram, this.o.now(), this.knowledge, rinfo.address);
    if (verified) this.believe(verified, rinfo);
  }

  private believe(v: Verified, rinfo: Pick<RemoteInfo, 'address' | 'port'>): void {
    const m = v.message;
    if (v.kind === 'intro') {
      // Not in the table: a device dropped for silence, one whose hello we missed (hellos are not retained:
      // a device that starts after its peers never sees theirs), or one only its certificate vouches for.
      // The fleet CA issued that certificate to this id and the signature proves its key: the id is as
      // vouched as the bus would make it, and the address is where its authenticated datagram came from.
      if (!this.table.get(m.from)) {
        const known = this.vouched.get(m.from);
        const announce: PeerAnnounce = known ?? {
          deviceId: m.from,
          address: rinfo.address,
          meshPort: rinfo.port,
          sidecarPort: m.sidecar_port,
          source: 'hello',
        };
        if (this.table.announce(announce) === 'refused') {
          this.counters.peers_refused += 1;
          return;
        }
        if (!known) this.vouch(announce);
      }
      const peer = this.table.get(m.from);
      if (!peer) return;
      if (!peer.pairKey || peer.certFingerprint !== v.certificate.fingerprint) {
        peer.pairKey = this.o.identity.pairKey(this.o.key, m.from, v.certificate.publicKey);
        peer.certFingerprint = v.certificate.fingerprint;
      }
      this.table.heard(m.from, rinfo.address, rinfo.port, m.sidecar_port);
      // It does not hold our certificate yet: introduce ourselves back (it can then seal for us).
      if (m.known === false) this.send({ t: 'hello', known: true }, peer, rinfo.address, rinfo.port);
      return;
    }
    const peer = this.table.heard(m.from, rinfo.address, rinfo.port, m.sidecar_port);
    if (!peer) return;
    if (m.t === 'ack') {
      const pending = peer.pendingHeartbeat;
      if (pending && m.echo === pending.seq) {
        peer.rttMs = Math.round((this.monotonic() - pending.sentAt) * 1000) / 1000;
        peer.pendingHeartbeat = null;
      }
      return;
    }
    this.send({ t: 'ack', echo: m.seq }, peer, rinfo.address, rinfo.port);
  }

  /** Signs for `peer` and sends; returns the seq used (null when nothing could be sent). Failures are counted, never thrown. */
  private send(what: Pick<MeshMessage, 't' | 'echo' | 'known'>, peer: Peer, address: string, port: number): number | null {
    const socket = this.socket;
    if (!socket || this.closed || this.boundPort === null) return null;
    const sealed = what.t !== 'hello';
    if (sealed && !peer.pairKey) return null;
    this.seq += 1;
    const message: MeshMessage = {
      t: what.t,
      from: this.o.deviceId,
      to: peer.deviceId,
      seq: this.seq,
      ts: this.o.now(),
      boot: this.boot,
      ...(what.echo !== undefined ? { echo: what.echo } : {}),
      ...(what.known !== undefined ? { known: what.known } : {}),
      mesh_port: this.boundPort,
      sidecar_port: this.o.sidecarPort(),
    };
    let datagram: Buffer;
    try {
      datagram = sealed
        ? encodeSealed(message, peer.pairKey!)
        : encodeIntroduction(message, { fleetKey: this.o.key, certificate: this.o.identity.certificate, privateKey: this.o.identity.privateKey });
    } catch (err) {
      // A certificate too large for one datagram: said once a greeting, never thrown into the socket's callback.
      this.counters.send_errors += 1;
      this.o.log.warn({ err: (err as Error).message, peer: peer.deviceId }, 'mesh datagram not sent');
      return null;
    }
    this.counters.sent += 1;
    socket.send(datagram, port, address).catch((err: Error) => {
      this.counters.send_errors += 1;
      this.o.log.debug({ err: err.message, address, port }, 'mesh datagram not sent');
    });
    return this.seq;
  }
}
