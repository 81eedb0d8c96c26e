import type { RelayedMessage } from './ingest-batch.js';

/** The newest message of a topic held back, and how many earlier ones of that topic it stands for. */
export interface HeldMessage extends RelayedMessage {
  collapsed: number;
}

/** A held message and when it was held: a device's topics are applied in the order of their newest messages. */
type Slot = HeldMessage & { order: number };

/**
 * The dets and telemetry of devices another replica owns, held until they are applied: per device
 * and topic only the newest, each device's topics in the order of their newest messages. A replica
 * applies a device it does not own at most once per interval (and whenever it is read, or another
 * of its topics arrives): ten messages a second of each become one, while what a reader sees of the
 * device is its newest. Held per message: a device holds a slot or two, updated in place.
 */
export class MirroredMessages {
  private readonly held = new Map<string, Slot[]>();
  private order = 0;
  /** Messages that were held and replaced by a newer one of their topic before being applied. */
  collapsed = 0;

  get devices(): number {
    return this.held.size;
  }

  hold(deviceId: string, m: RelayedMessage): void {
    const order = ++this.order;
    let slots = this.held.get(deviceId);
    if (!slots) this.held.set(deviceId, (slots = []));
    for (const slot of slots) {
      if (slot.topic !== m.topic) continue;
      slot.payload = m.payload;
      slot.retain = m.retain;
      slot.at = m.at;
      slot.order = order;
      slot.collapsed++;
      this.collapsed++;
      return;
    }
    slots.push({ topic: m.topic, payload: m.payload, retain: m.retain, at: m.at, collapsed: 0, order });
  }

  /** What is held for the device, in order, and no longer held. */
  take(deviceId: string): HeldMessage[] | undefined {
    const slots = this.held.get(deviceId);
    if (!slots) return undefined;
    this.held.delete(deviceId);
    return slots.length > 1 ? slots.sort((a, b) => a.order - b.order) : slots;
  }

  deviceIds(): string[] {
    return [...this.held.keys()];
  }
}
