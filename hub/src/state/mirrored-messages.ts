import type { RelayedMessage } from './ingest-batch.js';

/** The newest message of a topic held back, and how many earlier ones of that topic it stands for. */
export interface HeldMessage extends RelayedMessage {
  collapsed: number;
}

/**
 * The dets and telemetry of devices another replica owns, held until they are applied: per device
 * and topic only the newest, each device's topics in the order of their newest messages. A replica
 * applies a device it does not own at most once per interval (and whenever it is read, or another
 * of its topics arrives): ten messages a second of each become one, while what a reader sees of the
 * device is its newest.
 */
export class MirroredMessages {
  private readonly held = new Map<string, Map<string, HeldMessage>>();
  /** Messages that were held and replaced by a newer one of their topic before being applied. */
  collapsed = 0;

  get devices(): number {
    return this.held.size;
  }

  hold(deviceId: string, m: RelayedMessage): void {
    let topics = this.held.get(deviceId);
    if (!topics) this.held.set(deviceId, (topics = new Map<string, HeldMessage>()));
    const before = topics.get(m.topic);
    // Taken out and put back: a topic's place in the device's order is that of its newest message.
    if (before) {
      topics.delete(m.topic);
      this.collapsed++;
    }
    topics.set(m.topic, { ...m, collapsed: before ? before.collapsed + 1 : 0 });
  }

  /** What is held for the device, in order, and no longer held. */
  take(deviceId: string): HeldMessage[] | undefined {
    const topics = this.held.get(deviceId);
    if (!topics) return undefined;
    this.held.delete(deviceId);
    return [...topics.values()];
  }

  deviceIds(): string[] {
    return [...this.held.keys()];
  }
}
