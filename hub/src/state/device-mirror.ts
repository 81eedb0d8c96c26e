import { DeviceOwnership } from './device-ownership.js';
import { MirroredMessages, type HeldMessage } from './mirrored-messages.js';
import { StreamMembership } from './stream-membership.js';

/** The topics a device sends many times a second, held back for a device another replica owns (`devices/<id>/<suffix>`). */
const MIRRORED_SUFFIXES = ['dets', 'telemetry'];
const DEVICES = 'devices/';
/** The followers' key for every device (no device id is empty). */
const FOLLOW_ALL = '';

export interface DeviceMirrorOptions {
  /** This replica's member id (its first ingest lane's client id, under which its heartbeat is written). */
  self: string;
  intervalMs: number;
  /** Applies a message this mirror held (the relay's handlers), with how many it stands for. */
  apply(m: HeldMessage): void;
  /** True while a message is being applied: a read from one of its handlers must not apply held ones in the middle of it. */
  applying(): boolean;
}

/**
 * How a replica divides the apply (`--mirror-interval-ms`): of the devices it owns (DeviceOwnership)
 * it applies every message; of the others, every message but their dets and telemetry, of which it
 * holds the newest (MirroredMessages) until the device has waited the interval, is read (`freshen`),
 * or sends another topic. A device an event stream follows is applied message by message.
 */
export class DeviceMirror {
  private readonly ownership: DeviceOwnership;
  /** Who owns which device, changed where the ingest stream says (the relay feeds it). */
  readonly membership: StreamMembership;
  private readonly held = new MirroredMessages();
  /** Devices applied message by message whoever owns them, with how many asked (FOLLOW_ALL: every device). */
  private readonly followers = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly o: DeviceMirrorOptions) {
    this.ownership = new DeviceOwnership(o.self);
    this.membership = new StreamMembership(this.ownership);
    // The devices that have waited the interval, looked for eight times per interval: a fleet's held
    // messages are applied a part at a time, not all in one turn.
    this.timer = setInterval(() => this.applyDue(), Math.max(10, Math.floor(o.intervalMs / 8)));
    this.timer.unref();
  }

  /**
   * `held`: the message is held (applied later). Else the caller applies it now, after what was held
   * of its device (applied here first, as the stream has it): `own` as every replica applies it,
   * `foreign` as a dets or telemetry of a device another replica owns, which derives from it what is
   * derived from each (HeldMessage: held ones are foreign too).
   */
  hold(topic: string, payload: Buffer, retain: boolean, at: number): 'held' | 'own' | 'foreign' {
    const deviceId = deviceOf(topic);
    if (deviceId === undefined) return 'own';
    const foreign = isMirrored(topic, deviceId) && !this.ownership.owns(deviceId);
    // Not held: a copy, or older than the one held (it arrived late); applied now, the cache keeps the newest.
    if (foreign && !this.followed(deviceId)) return this.held.hold(deviceId, { topic, payload, retain, at }, Date.now()) ? 'held' : 'foreign';
    this.applyHeld(deviceId);
    return foreign ? 'foreign' : 'own';
  }

  /**
   * Every message of the device (of every device when none is named) applied as it arrives, whoever
   * owns it, until the returned function is called: for an event stream that sends the device's
   * detector-rate boxes, which the interval would thin out.
   */
  follow(deviceId?: string): () => void {
    const key = deviceId ?? FOLLOW_ALL;
    this.followers.set(key, (this.followers.get(key) ?? 0) + 1);
    this.freshen(deviceId);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.followers.get(key) ?? 1) - 1;
      if (left > 0) this.followers.set(key, left);
      else this.followers.delete(key);
    };
  }

  /**
   * Applies now what is held back of a device another replica owns (every device's when none is
   * named): called before the device is read, so that a read on any replica shows its newest messages.
   */
  freshen(deviceId?: string): void {
    if (this.o.applying() || this.held.devices === 0) return;
    if (deviceId !== undefined) return this.applyHeld(deviceId);
    for (const id of this.held.deviceIds()) this.applyHeld(id);
  }

  status(): { interval_ms: number; replicas: number; collapsed: number; held_devices: number; followers: number } {
    return {
      interval_ms: this.o.intervalMs,
      replicas: this.ownership.memberIds.length,
      collapsed: this.held.collapsed,
      held_devices: this.held.devices,
      followers: [...this.followers.values()].reduce((n, k) => n + k, 0),
    };
  }

  close(): void {
    clearInterval(this.timer);
  }

  private followed(deviceId: string): boolean {
    return this.followers.size > 0 && (this.followers.has(FOLLOW_ALL) || this.followers.has(deviceId));
  }

  private applyDue(): void {
    if (this.held.devices === 0) return;
    // Taken before they are applied: applying a device takes it out of the map being walked.
    for (const id of [...this.held.due(Date.now() - this.o.intervalMs)]) this.applyHeld(id);
  }

  private applyHeld(deviceId: string): void {
    const messages = this.held.take(deviceId);
    if (messages) for (const m of messages) this.o.apply(m);
  }
}

/** The device of a `devices/<id>/…` topic. */
function deviceOf(topic: string): string | undefined {
  if (!topic.startsWith(DEVICES)) return undefined;
  const end = topic.indexOf('/', DEVICES.length);
  return end > DEVICES.length ? topic.slice(DEVICES.length, end) : undefined;
}

/** `devices/<deviceId>/dets` or `…/telemetry`: compared in place, without cutting the suffix out (once per message). */
function isMirrored(topic: string, deviceId: string): boolean {
  const suffixLength = topic.length - DEVICES.length - deviceId.length - 1;
  return MIRRORED_SUFFIXES.some((suffix) => suffix.length === suffixLength && topic.endsWith(suffix));
}
