import type { RelayedMessage } from './ingest-batch.js';

/** The newest message of a topic held back, and how many earlier ones of that topic it stands for. */
export interface HeldMessage extends RelayedMessage {
  collapsed: number;
  /**
   * The first of those (when there are any): it may be a copy of the message the cache already
   * holds (the broker sent it again when a session changed hands), which the cache does not count
   * twice. The ones after it were each newer than the one before, so none is a copy of another.
   * Absent when a message of the topic was applied while they were held (a late one, or a copy).
   */
  first?: Buffer;
}

/** A held message, when it was held (a device's topics are applied in the order of their newest messages), and where its stamp is. */
interface Slot extends HeldMessage {
  order: number;
  stamp: Stamp | undefined;
}

interface Held {
  /** When the device's first message was held: a device is applied once it has waited the interval. */
  since: number;
  slots: Slot[];
}

/** The bytes of a payload's `"timestamp"` string, found without parsing the JSON. */
interface Stamp {
  start: number;
  end: number;
}

const TIMESTAMP_KEY = Buffer.from('"timestamp"');
/** A slot's `first` once a message of its topic was applied past it: counted, never compared (and not set again). */
const SPENT = Buffer.alloc(0);
const QUOTE = 0x22;
const Z = 0x5a;
/** Bytes a stamp has at most (an ISO time with its offset and nanoseconds is ~35). */
const MAX_STAMP = 64;

/**
 * The dets and telemetry of devices another replica owns, held until they are applied: per device
 * and topic only the newest, each device's topics in the order of their newest messages. A replica
 * applies a device it does not own once it has waited the interval (and whenever it is read, or
 * another of its topics arrives): ten messages a second of each become one, while what a reader
 * sees of the device is its newest. Devices wait in the order their first message was held (the
 * map's), so the ones that are due are found at its front.
 *
 * A message that is not newer than the one held (a copy the broker sent again, or one that arrives
 * late: taken from a stopped replica's session, written back after a Redis outage) is not held: the
 * caller applies it at once, and the cache, which keeps the newest by the device's own clock and
 * counts a copy once, ends where the owner's does.
 */
export class MirroredMessages {
  private readonly held = new Map<string, Held>();
  private order = 0;
  /** Messages that were held and replaced by a newer one of their topic before being applied. */
  collapsed = 0;

  get devices(): number {
    return this.held.size;
  }

  /** Holds the message; false when it is to be applied now instead (not newer than the one held). */
  hold(deviceId: string, m: RelayedMessage, now: number): boolean {
    const order = ++this.order;
    let device = this.held.get(deviceId);
    if (!device) this.held.set(deviceId, (device = { since: now, slots: [] }));
    for (const slot of device.slots) {
      if (slot.topic !== m.topic) continue;
      const stamp = stampOf(m.payload);
      if (!isNewer(m.payload, stamp, slot.payload, slot.stamp)) {
        // Applied now, it may be a copy of the first: that one can no longer be told from what the cache shows.
        if (slot.first) slot.first = SPENT;
        return false;
      }
      slot.first ??= slot.payload;
      slot.payload = m.payload;
      slot.stamp = stamp;
      slot.retain = m.retain;
      slot.at = m.at;
      slot.order = order;
      slot.collapsed++;
      this.collapsed++;
      return true;
    }
    device.slots.push({ topic: m.topic, payload: m.payload, retain: m.retain, at: m.at, collapsed: 0, first: undefined, order, stamp: stampOf(m.payload) });
    return true;
  }

  /** What is held for the device, in order, and no longer held. */
  take(deviceId: string): HeldMessage[] | undefined {
    const device = this.held.get(deviceId);
    if (!device) return undefined;
    this.held.delete(deviceId);
    for (const slot of device.slots) if (slot.first === SPENT) slot.first = undefined;
    return device.slots.length > 1 ? device.slots.sort((a, b) => a.order - b.order) : device.slots;
  }

  /** The devices held since `before` or earlier, oldest first. */
  *due(before: number): Generator<string> {
    for (const [deviceId, device] of this.held) {
      if (device.since > before) return;
      yield deviceId;
    }
  }

  deviceIds(): string[] {
    return [...this.held.keys()];
  }
}

/**
 * Whether `next` replaces `held`: a stamp that is not older, and not the same bytes again. Stamps in
 * the same ISO form (`…Z`, as devices write them) compare as bytes; others are parsed. Without a
 * stamp on either side the later in the stream wins, as in the cache.
 */
function isNewer(next: Buffer, nextStamp: Stamp | undefined, held: Buffer, heldStamp: Stamp | undefined): boolean {
  if (!nextStamp || !heldStamp) return !(next.length === held.length && next.equals(held));
  const order = compareStamps(next, nextStamp, held, heldStamp);
  // The same stamp: a copy the broker sent again is the same bytes (the only case that compares them all).
  return order > 0 || (order === 0 && !(next.length === held.length && next.equals(held)));
}

function compareStamps(a: Buffer, as: Stamp, b: Buffer, bs: Stamp): number {
  const length = as.end - as.start;
  if (length === bs.end - bs.start && a[as.end - 1] === Z && b[bs.end - 1] === Z) {
    // Two dozen bytes: a loop here costs less than a call into Buffer's native compare (per held message).
    for (let i = 0; i < length; i++) {
      const d = a[as.start + i] - b[bs.start + i];
      if (d !== 0) return d;
    }
    return 0;
  }
  const ta = Date.parse(a.toString('latin1', as.start, as.end));
  const tb = Date.parse(b.toString('latin1', bs.start, bs.end));
  return Number.isFinite(ta) && Number.isFinite(tb) ? Math.sign(ta - tb) : 1;
}

/**
 * The first `"timestamp": "…"` of the payload: where devices put it, first (`{"timestamp":"`), read
 * in place; else found by a scan of its bytes (the contracts of dets and telemetry put it at the top
 * level; a nested one found first only makes the comparison less apt).
 */
function stampOf(payload: Buffer): Stamp | undefined {
  let key = 1;
  for (let i = 0; i < TIMESTAMP_KEY.length; i++) {
    if (payload[1 + i] !== TIMESTAMP_KEY[i]) {
      key = payload.indexOf(TIMESTAMP_KEY);
      break;
    }
  }
  if (key < 0) return undefined;
  let i = key + TIMESTAMP_KEY.length;
  while (i < payload.length && payload[i] !== QUOTE) {
    const c = payload[i];
    // Only blanks and the colon between the key and its string value.
    if (c !== 0x3a && c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return undefined;
    i++;
  }
  if (i >= payload.length) return undefined;
  // The closing quote of a stamp a few dozen bytes long, looked for in place (as above, cheaper than indexOf).
  for (let end = i + 1; end < payload.length && end <= i + MAX_STAMP; end++) if (payload[end] === QUOTE) return { start: i + 1, end };
  return undefined;
}
