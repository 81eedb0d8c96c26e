import type { PeerState } from 'lookout/core/contracts';

export type PeerSource = 'hello' | 'config';

export interface Peer {
  deviceId: string;
  /** Where its datagrams come from (or, before the first, where its hello or MESH_PEERS says). */
  address: string;
  meshPort: number;
  sidecarPort: number | null;
  source: PeerSource;
  /** Wall clock (ms since the epoch) of its last valid datagram, for the status only. */
  lastSeenAt: number | null;
  /** Monotonic clock of its last valid datagram: states are reckoned on it, so a wall-clock step neither revives nor kills a peer. */
  heardAt: number | null;
  /** Monotonic clock when it entered the table (a peer found by hello and never heard goes after the down time). */
  addedAt: number;
  /** Monotonic clock of the last unasked-for datagram sent to it (greeting or heartbeat): at most one per heartbeat. */
  greetedAt: number | null;
  rttMs: number | null;
  /** The newest heartbeat sent to it and not yet answered: one per peer, so silence costs nothing. */
  pendingHeartbeat: { seq: number; sentAt: number } | null;
  /** State as of the last sweep (for transitions); read `stateOf` for the current one. */
  lastState: PeerState;
  /** The key this device and the peer share (mesh-identity.ts); null until one of them introduced itself. */
  pairKey: Buffer | null;
  /** Fingerprint of the certificate the pair key was derived from: a new certificate means a new key. */
  certFingerprint: string | null;
}

export interface PeerTableOptions {
  /** Monotonic clock (ms): liveness and ages. */
  monotonic(): number;
  /** Wall clock (ms since the epoch): only what the status shows as last seen. */
  wallNow(): number;
  suspectMs: number;
  downMs: number;
  /** A peer found by hello and silent this long leaves the table (it returns when it speaks again). */
  dropMs: number;
  maxPeers: number;
}

export interface PeerAnnounce {
  deviceId: string;
  address: string;
  meshPort: number;
  sidecarPort?: number | null;
  source: PeerSource;
}

export interface Transition {
  deviceId: string;
  from: PeerState;
  to: PeerState;
}

/**
 * Known peers and their state: up (a valid datagram within the suspect time), suspect (within the
 * down time), down (silent longer, or never heard), on the monotonic clock. Bounded by `maxPeers`: a
 * newcomer replaces the longest-silent down peer learned from a hello (MESH_PEERS entries are the
 * operator's and stay), or is refused; a peer learned from a hello and never heard within the down
 * time leaves (`dropUnheard`), so hellos naming hosts that never answer do not keep being heartbeated,
 * and one silent past the drop time leaves too (`dropSilent`).
 */
export class PeerTable {
  private readonly peers = new Map<string, Peer>();

  constructor(private readonly o: PeerTableOptions) {}

  stateOf(peer: Peer): PeerState {
    if (peer.heardAt === null) return 'down';
    const silent = this.o.monotonic() - peer.heardAt;
    if (silent < this.o.suspectMs) return 'up';
    return silent < this.o.downMs ? 'suspect' : 'down';
  }

  get(deviceId: string): Peer | undefined {
    return this.peers.get(deviceId);
  }

  list(): Peer[] {
    return [...this.peers.values()];
  }

  get size(): number {
    return this.peers.size;
  }

  /**
   * Adds a peer or updates where it is: a hello moves a peer found by hello; a configured peer's
   * address is the operator's word, and only its own datagrams (`heard`) move it.
   * Returns `added`, `updated` (address, port or sidecar changed), `same`, or `refused` (table full).
   */
  announce(a: PeerAnnounce): 'added' | 'updated' | 'same' | 'refused' {
    const known = this.peers.get(a.deviceId);
    if (!known) {
      if (this.peers.size >= this.o.maxPeers && !this.evictOne()) return 'refused';
      this.peers.set(a.deviceId, {
        deviceId: a.deviceId,
        address: a.address,
        meshPort: a.meshPort,
        sidecarPort: a.sidecarPort ?? null,
        source: a.source,
        lastSeenAt: null,
        heardAt: null,
        addedAt: this.o.monotonic(),
        greetedAt: null,
        rttMs: null,
        pendingHeartbeat: null,
        lastState: 'down',
        pairKey: null,
        certFingerprint: null,
      });
      return 'added';
    }
    let changed = false;
    if (a.sidecarPort !== undefined && a.sidecarPort !== known.sidecarPort) {
      known.sidecarPort = a.sidecarPort;
      changed = true;
    }
    if (a.source === 'config' && known.source !== 'config') {
      known.source = 'config';
      changed = true;
    }
    if ((a.source === 'config' || known.source === 'hello') && (known.address !== a.address || known.meshPort !== a.meshPort)) {
      known.address = a.address;
      known.meshPort = a.meshPort;
      changed = true;
    }
    return changed ? 'updated' : 'same';
  }

  /** A valid datagram from a known peer: it is up, at the address and port it came from. */
  heard(deviceId: string, address: string, port: number, sidecarPort: number | null): Peer | undefined {
    const peer = this.peers.get(deviceId);
    if (!peer) return undefined;
    peer.lastSeenAt = this.o.wallNow();
    peer.heardAt = this.o.monotonic();
    peer.address = address;
    peer.meshPort = port;
    peer.sidecarPort = sidecarPort;
    return peer;
  }

  /** Each peer whose state changed since the last sweep. */
  sweep(): Transition[] {
    const out: Transition[] = [];
    for (const peer of this.peers.values()) {
      const to = this.stateOf(peer);
      if (to !== peer.lastState) out.push({ deviceId: peer.deviceId, from: peer.lastState, to });
      peer.lastState = to;
    }
    return out;
  }

  /** Takes out every peer found by hello that has not been heard once within the down time; returns their ids. */
  dropUnheard(): string[] {
    const now = this.o.monotonic();
    const gone: string[] = [];
    for (const peer of this.peers.values()) {
      if (peer.source !== 'hello' || peer.heardAt !== null || now - peer.addedAt < this.o.downMs) continue;
      this.peers.delete(peer.deviceId);
      gone.push(peer.deviceId);
    }
    return gone;
  }

  /**
   * Takes out every peer found by hello that was heard but has been silent for the drop time; returns
   * their ids. A device that left (or one heard once and never again) would otherwise stay down in the
   * table for good and keep the mesh graded degraded; a configured peer is the operator's and stays.
   */
  dropSilent(): string[] {
    const now = this.o.monotonic();
    const gone: string[] = [];
    for (const peer of this.peers.values()) {
      if (peer.source !== 'hello' || peer.heardAt === null || now - peer.heardAt < this.o.dropMs) continue;
      this.peers.delete(peer.deviceId);
      gone.push(peer.deviceId);
    }
    return gone;
  }

  private evictOne(): boolean {
    let victim: Peer | undefined;
    for (const peer of this.peers.values()) {
      if (peer.source !== 'hello' || this.stateOf(peer) !== 'down') continue;
      if (!victim || (peer.heardAt ?? -Infinity) < (victim.heardAt ?? -Infinity)) victim = peer;
    }
    if (!victim) return false;
    this.peers.delete(victim.deviceId);
    return true;
  }
}
