import { createHash } from 'node:crypto';

/** Devices whose owner is remembered at most (a fleet is bounded by the hub's max devices, 10 000 by default). */
const MAX_REMEMBERED = 100_000;

/**
 * Which live replica owns a device: rendezvous (highest random weight) hashing of the device id
 * with each member's id. Every replica that sees the same members names the same owner, and when a
 * member joins or leaves only the devices it gains or held move (about 1/n of them), without a
 * coordinator or a table in Redis. Members are the replicas' stable ingest client ids, so a replica
 * that restarts owns the same devices again. They change where the ingest stream says so
 * (StreamMembership), so every replica, and one reading the stream again, names the same owner for
 * each message. With no member (before any replica joined) every replica owns every device.
 */
export class DeviceOwnership {
  private members: readonly string[];
  /** Owner per device, remade when the members change (a map lookup per message, not n hashes). */
  private owners = new Map<string, boolean>();

  constructor(readonly self: string) {
    this.members = [];
  }

  get memberIds(): readonly string[] {
    return this.members;
  }

  /** True when they changed. */
  setMembers(members: Iterable<string>): boolean {
    const next = [...new Set(members)].sort();
    if (next.length === this.members.length && next.every((m, i) => m === this.members[i])) return false;
    this.members = next;
    this.owners = new Map();
    return true;
  }

  owns(deviceId: string): boolean {
    let mine = this.owners.get(deviceId);
    if (mine === undefined) {
      // Asked for every device id a topic names, known or not: bounded, remade as needed.
      if (this.owners.size >= MAX_REMEMBERED) this.owners = new Map();
      mine = this.members.length === 0 || this.ownerOf(deviceId) === this.self;
      this.owners.set(deviceId, mine);
    }
    return mine;
  }

  /** Undefined while there is no member. */
  ownerOf(deviceId: string): string | undefined {
    let best = this.members[0];
    let bestWeight = -1;
    for (const member of this.members) {
      const weight = weightOf(member, deviceId);
      if (weight > bestWeight || (weight === bestWeight && member < best)) {
        best = member;
        bestWeight = weight;
      }
    }
    return best;
  }
}

/** The first 48 bits of SHA-1 over member and device: spread evenly whatever the ids look like (`cam-0001`, `cam-0002`…). */
function weightOf(member: string, deviceId: string): number {
  return createHash('sha1').update(member).update('\0').update(deviceId).digest().readUIntBE(0, 6);
}
