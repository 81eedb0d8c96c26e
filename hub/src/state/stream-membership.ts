import type { DeviceOwnership } from './device-ownership.js';

/** A replica joining or leaving the members that divide the apply, written in the ingest stream. */
export type MembershipChange = { join: string } | { leave: string };

/** A member's id as the relay writes it (its first lane's client id). */
const MEMBER_ID = /^[\w.:-]{1,200}$/;
/** A change asked for and not yet read back is not asked again before this (a heartbeat round is 1 s). */
const ASK_AGAIN_MS = 3_000;
/** Heartbeat rounds a member must be missing from before it is written as gone (one that is starting writes its join before its first heartbeat). */
const ROUNDS_BEFORE_LEAVE = 2;

/**
 * Who divides the apply, as the ingest stream says at each of its entries. A replica writes its own
 * join before it takes a message and its leave once it has stopped taking them; the heartbeats
 * (SessionAdoption) only tell a replica which changes to write for the others (`reconcile`: a crashed
 * one's leave, the join of one whose own did not land). Every replica changes the owners when it
 * reads a change, so each message is owned by the same replica wherever it is applied, also when
 * a restarted replica reads it again from its saved point: the fleet history each owner folds stays
 * exact across stops, starts and restarts.
 */
export class StreamMembership {
  /** Rounds each member has been missing from the heartbeats. */
  private readonly missing = new Map<string, number>();
  private readonly asked = new Map<string, number>();

  constructor(private readonly ownership: DeviceOwnership) {}

  get members(): readonly string[] {
    return this.ownership.memberIds;
  }

  /** A change read from the stream (its JSON): false if it is not one or changes nothing. */
  apply(json: string): boolean {
    const change = membershipChangeOf(json);
    if (!change) return false;
    const members = new Set(this.ownership.memberIds);
    if ('join' in change) members.add(change.join);
    else members.delete(change.leave);
    return this.ownership.setMembers(members);
  }

  /** Saved with the stream point (`toJSON`), restored with it: the members as of that entry. */
  restore(saved: string | undefined): void {
    if (saved === undefined) return;
    try {
      const list: unknown = JSON.parse(saved);
      if (Array.isArray(list)) this.ownership.setMembers(list.filter((m): m is string => typeof m === 'string' && MEMBER_ID.test(m)));
    } catch {
      // Not readable: the members stay as they are until the stream's next changes.
    }
  }

  toJSON(): string {
    return JSON.stringify(this.ownership.memberIds);
  }

  /**
   * The changes to write so that the members are the replicas alive now (`live`, the heartbeats): a
   * live replica that is not a member joins, a member missing from ROUNDS_BEFORE_LEAVE rounds leaves.
   * Any replica may write them; a change read twice does nothing the second time.
   */
  reconcile(live: readonly string[], now = Date.now()): MembershipChange[] {
    const alive = new Set(live);
    const members = this.ownership.memberIds;
    const changes: MembershipChange[] = [];
    for (const id of alive) if (!members.includes(id)) changes.push({ join: id });
    for (const id of [...this.missing.keys()]) if (alive.has(id) || !members.includes(id)) this.missing.delete(id);
    for (const id of members) {
      if (alive.has(id)) continue;
      const rounds = (this.missing.get(id) ?? 0) + 1;
      this.missing.set(id, rounds);
      if (rounds >= ROUNDS_BEFORE_LEAVE) changes.push({ leave: id });
    }
    for (const [key, at] of this.asked) if (at <= now - ASK_AGAIN_MS) this.asked.delete(key);
    return changes.filter((c) => {
      const key = JSON.stringify(c);
      if (this.asked.has(key)) return false;
      this.asked.set(key, now);
      return true;
    });
  }
}

export function membershipChangeOf(json: string): MembershipChange | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { join, leave } = value as { join?: unknown; leave?: unknown };
  if (typeof join === 'string' && MEMBER_ID.test(join) && leave === undefined) return { join };
  if (typeof leave === 'string' && MEMBER_ID.test(leave) && join === undefined) return { leave };
  return undefined;
}
