import type { RelayedMessage } from './ingest-batch.js';

/** The newest message of a topic held back, and how many earlier ones of that topic it stands for. */
export interface HeldMessage extends RelayedMessage {
  collapsed: number;
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
const QUOTE = 0x22;

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
      if (!isNewer(m.payload, stamp, slot.payload, slot.stamp)) return false;
      slot.payload = m.payload;
      slot.stamp = stamp;
      slot.retain = m.retain;
      slot.at = m.at;
      slot.order = order;
      slot.collapsed++;
      this.collapsed++;
      return true;
    }
    device.slots.push({ topic: m.topic, payload: m.payload, retain: m.retain, at: m.at, collapsed: 0, order, stamp: stampOf(m.payload) });
    return true;
  }

  /** What is held for the device, in order, and no longer held. */
  take(deviceId: string): HeldMessage[] | undefined {
    const device = this.held.get(deviceId);
    if (!device) return undefined;
    this.held.delete(deviceId);
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
 * Whether `next` replaces `held`: a different message whose stamp is not older. Stamps in the same
 * ISO form (`…Z`, as devices write them) compare as bytes; others are parsed. Without a stamp on
 * either side the later in the stream wins, as in the cache.
 */
function isNewer(next: Buffer, nextStamp: Stamp | undefined, held: Buffer, heldStamp: Stamp | undefined): boolean {
  if (next.length === held.length && next.equals(held)) return false;
  if (!nextStamp || !heldStamp) return true;
  const a = next.subarray(nextStamp.start, nextStamp.end);
  const b = held.subarray(heldStamp.start, heldStamp.end);
  if (a.length === b.length && a[a.length - 1] === 0x5a && b[b.length - 1] === 0x5a) return Buffer.compare(a, b) >= 0; // 'Z'
  const [ta, tb] = [Date.parse(a.toString()), Date.parse(b.toString())];
  return !(Number.isFinite(ta) && Number.isFinite(tb)) || ta >= tb;
}

/**
 * The first `"timestamp": "…"` of the payload, by a scan of its bytes (the contracts of dets and
 * telemetry put it at the top level; a nested one found first only makes the comparison less apt).
 */
function stampOf(payload: Buffer): Stamp | undefined {
  const key = payload.indexOf(TIMESTAMP_KEY);
  if (key < 0) return undefined;
  let i = key + TIMESTAMP_KEY.length;
  while (i < payload.length && payload[i] !== QUOTE) {
    const c = payload[i];
    // Only blanks and the colon between the key and its string value.
    if (c !== 0x3a && c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return undefined;
    i++;
  }
  const end = payload.indexOf(QUOTE, i + 1);
  return i < payload.length && end > i ? { start: i + 1, end } : undefined;
}
