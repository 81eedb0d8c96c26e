import type { BusSuffix } from 'lookout/core/contracts';
import type { Logger } from 'lookout/core';
import type { HubMetricsPort } from 'lookout/hub';
import type { DebugRing } from '../../debug-ring/src/service.js';
import type { AdmissionRules } from './admission-rules.js';
import { AdmissionStage } from './admission-stage.js';
import { classifyAlerts } from './alert-classification.js';
import { applyToCache, OLDER } from './cache-stage.js';
import { ContractStage } from './contract-stage.js';
import { isRedelivery, type DeviceCache } from './device-cache.js';
import type { Early, HoldLimits } from './early-messages.js';
import { IngestCounters } from './ingest-counters.js';
import { IngestEvents, Refusal, type AppliedListener } from './ingest-events.js';
import { meterIngest } from './ingest-metrics.js';
import { recordIngest } from './ingest-ring.js';
import { parsePayload, TopicStage, type KnownTopic } from './parse-stage.js';
import type { IngestedMessage, IngestStatus } from './service.js';

export { HOT_CONTRACTS } from './contract-stage.js';

/** A message as it came: not one a hub replica held back, nor of a device another replica owns. */
const AS_CAME = { unseen: 0, foreign: false };

export interface IngestLimits {
  maxMessageBytes: number;
  maxDepth: number;
  maxDevices: number;
  maxTopicsPerDevice: number;
  maxAlerts: number;
  maxChunks: number;
  /** How long, and how many, valid messages of a device not known yet wait for it (early-messages.ts). */
  hold?: Partial<HoldLimits>;
}

type Listener = (m: IngestedMessage) => void;

/** How a message reached the ingest (see `Ingest.handle`). */
export interface IngestMeta {
  retain: boolean;
  receivedAt?: number;
  collapsed?: number;
  /** The first of the `collapsed` messages: not counted if it is a copy of the message the cache holds (HeldMessage.first). */
  collapsedFirst?: Buffer | undefined;
  /** A dets or telemetry of a device another replica owns (IngestedMessage.foreign). */
  foreign?: boolean;
}

/**
 * Every bus message passes here once, through four stages in order: (a) the topic and the payload's
 * size, JSON and depth (parse-stage), (b) the wire contract (contract-stage), (c) admission: which
 * devices have an entry, and the messages that wait for theirs (admission-stage), (d) the per-device
 * latest cache (cache-stage). A refused message never touches what the cache holds for its device.
 *
 * What the stages make of a message is told on IngestEvents, and the side effects listen, each in its
 * own file: refusal totals (ingest-counters), refusals per device (invalid-tally), the hub's metrics
 * (ingest-metrics), the debug ring (ingest-ring) and the chunks and alerts a device entry keeps
 * (alert-classification). Plugins hear of applied messages through `on`, last.
 */
export class Ingest {
  readonly admission: AdmissionRules;
  private readonly events = new IngestEvents();
  private readonly topics = new TopicStage();
  private readonly contract = new ContractStage();
  private readonly entries: AdmissionStage;
  private readonly counters: IngestCounters;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly now: () => number;
  /** The message being applied is foreign (IngestMeta.foreign): told to the listeners with it. */
  private foreign = false;

  constructor(
    private readonly limits: IngestLimits,
    private readonly deps: { metrics?: HubMetricsPort; ring?: DebugRing; log: Logger; now?: () => number; connected: () => boolean },
  ) {
    this.now = () => this.deps.now?.() ?? Date.now();
    const { events } = this;
    this.entries = new AdmissionStage({ maxDevices: limits.maxDevices, deviceLimits: this.deviceLimits, hold: limits.hold, events, now: this.now });
    this.admission = this.entries.rules;
    this.counters = new IngestCounters(events);
    events.on('refused', (r, _payload, now) => this.entries.invalid.count(r, now));
    if (deps.metrics) meterIngest(events, deps.metrics);
    classifyAlerts(events);
    if (deps.ring) recordIngest(events, deps.ring);
    events.on('applied', this.tell);
  }

  get devices(): Map<string, DeviceCache> {
    return this.entries.devices;
  }

  /** Bumped when a device entry is added or removed (the served id list is remade only then). */
  get membership(): number {
    return this.entries.membership;
  }

  /** Valid messages of devices that are not known (no hello, no admission rule): dropped. */
  get refusedUnknown(): number {
    return this.counters.refusedUnknown;
  }

  /** Valid messages of devices not known yet that wait for them now. */
  get heldUnknown(): number {
    return this.entries.early.size;
  }

  /** Bytes of those messages. */
  get heldBytes(): number {
    return this.entries.early.heldBytes;
  }

  on(key: BusSuffix | '*', listener: Listener): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /**
   * `heldAt`: when a message that waited for its device to become known arrived (it was counted then).
   * `meta.receivedAt`: when a hub replica took it from the broker (the shared ingest stream), so
   * that every replica dates it alike. `meta.collapsed`: earlier messages of the topic a replica
   * applies only through this one (a device another replica owns): counted as arrived and, when
   * this one is valid, in the topic's count, so that counts are alike on every replica.
   */
  handle(incomingTopic: string, payload: Buffer, meta: IngestMeta, heldAt?: number): void {
    const { events } = this;
    const now = heldAt ?? meta.receivedAt ?? this.now();
    const known = this.topics.check(incomingTopic);
    const unseen = meta.collapsed ?? 0;
    if (heldAt === undefined) {
      this.counters.received(now, 1 + unseen);
      for (let i = 0; i <= unseen; i++) events.received(known.key, now);
    }
    if (known instanceof Refusal) return events.refused(known, payload, now);
    const value = parsePayload(known, payload, this.limits);
    if (value instanceof Refusal) return events.refused(value, payload, now);
    const message = this.contract.check(known, value);
    if (message instanceof Refusal) return events.refused(message, payload, now);
    const device = this.entries.devices.get(known.deviceId);
    // No object per message unless a hub replica that divides the apply says something of it.
    const mirror = meta.foreign || unseen > 0 ? { unseen, first: meta.collapsedFirst, foreign: meta.foreign === true } : AS_CAME;
    if (device) return this.apply(device, known, message, meta.retain, now, mirror);
    const entry = this.entries.enter(known.deviceId, known.key, known.topic, payload, meta.retain, now, heldAt !== undefined);
    if (!entry) return;
    if (entry.waitedFirst) this.replay(entry.waited);
    this.apply(entry.device, known, message, meta.retain, now, mirror);
    if (!entry.waitedFirst) this.replay(entry.waited);
  }

  /**
   * Whether `first` (the first of the messages a held one stands for) is a copy of the message the
   * device's topic holds: then it was counted when that one was. Parsed only when it carries the
   * same stamp (once in a while: a copy comes when a broker session changes hands).
   */
  private isCopyOfLatest(device: DeviceCache, known: KnownTopic, first: Buffer | undefined): boolean {
    if (!first) return false;
    const current = device.latest.get(known.suffix)?.message;
    const stamp = current?.timestamp;
    if (!current || typeof stamp !== 'string' || first.indexOf(stamp) < 0) return false;
    const value = parsePayload(known, first, this.limits);
    const message = value instanceof Refusal ? value : this.contract.check(known, value);
    return !(message instanceof Refusal) && isRedelivery(current, message);
  }

  /**
   * Stage (d), then the listeners of what it changed. `mirror`: what a hub replica that divides the
   * apply says of the message (IngestMeta): the earlier messages of the topic it stands for (valid,
   * as each was when held), the first of them, and whether it is foreign.
   */
  private apply(
    device: DeviceCache,
    known: KnownTopic,
    message: Record<string, unknown>,
    retain: boolean,
    now: number,
    mirror: { unseen: number; first?: Buffer | undefined; foreign: boolean } = AS_CAME,
  ): void {
    const { key, suffix } = known;
    const { unseen } = mirror;
    // Before this one replaces the message the first may be a copy of.
    const copies = unseen > 0 && this.isCopyOfLatest(device, known, mirror.first) ? 1 : 0;
    const previous = applyToCache(device, key === 'events/+', suffix, message, retain, now);
    this.counters.valid += 1 + unseen;
    if (unseen > copies) device.countUnseen(suffix, unseen - copies);
    if (previous === OLDER) return;
    // Read by `tell`, within this call.
    this.foreign = mirror.foreign;
    this.events.applied(device, key, suffix, known.topic, message, previous, retain, now);
    this.foreign = false;
  }

  /** The bounds a device entry is created with (restored entries too). */
  get deviceLimits(): { maxTopics: number; maxAlerts: number; maxChunks: number } {
    return { maxTopics: this.limits.maxTopicsPerDevice, maxAlerts: this.limits.maxAlerts, maxChunks: this.limits.maxChunks };
  }

  /**
   * Entries reloaded from the hub's saved state, before the first message: a restored device is
   * known (its messages are taken as a hello-announced one's would be), within `maxDevices`.
   */
  restore(devices: Iterable<DeviceCache>): number {
    return this.entries.restore(devices);
  }

  /**
   * Every plugin has started, so every admission rule is in place: the messages of devices a rule
   * admits are applied (in arrival order); the others wait their window from now.
   */
  settle(): void {
    const now = this.now();
    for (const deviceId of this.entries.early.settle(now)) {
      if (this.admission.admits(deviceId)) this.replay(this.entries.early.take(deviceId));
    }
    // Without a window (0) the others are refused now, as they would be from now on.
    this.expireHeld(now);
  }

  /**
   * Ends the wait of the messages held for a window (called on a timer): refused and counted as an
   * unknown device's, dated when they arrived, unless a rule admits their device by now. Returns
   * how many messages it judged.
   */
  expireHeld(now = this.now()): number {
    const ended = this.entries.early.expire(now, (id) => this.admission.admits(id));
    this.replay(ended);
    return ended.length;
  }

  status(): IngestStatus {
    const c = this.counters;
    return {
      connected: this.deps.connected(),
      messages: c.messages,
      valid: c.valid,
      invalid: c.invalid,
      lastMessageAt: c.lastMessageAt,
      ratePerSec: this.deps.metrics?.ingestRate() ?? 0,
      invalidByTopic: { ...c.invalidByTopic },
      invalidByReason: { ...c.invalidByReason },
      devices: this.entries.devices.size,
      untrackedInvalid: this.entries.invalid.untracked,
      refusedDevices: c.refusedDevices,
    };
  }

  /** Judges messages that waited, in their order, as they would have been when they arrived. */
  private replay(messages: readonly Early[] | undefined): void {
    if (!messages) return;
    for (const m of messages) this.handle(m.topic, m.payload, { retain: m.retain }, m.at);
  }

  /** The plugins listening for this contract, then those listening for all; a failing listener is logged. */
  private readonly tell: AppliedListener = (device, key, suffix, topic, message, _previous, retain, now) => {
    const forKey = this.listeners.get(key);
    const forAll = this.listeners.get('*');
    if ((forKey && forKey.size > 0) || (forAll && forAll.size > 0)) {
      const event: IngestedMessage = { topic, deviceId: device.deviceId, suffix, key, message, receivedAt: now, retain, foreign: this.foreign };
      this.emit(forKey, event);
      this.emit(forAll, event);
    }
  };

  private emit(set: Set<Listener> | undefined, event: IngestedMessage): void {
    if (!set) return;
    for (const listener of set) {
      try {
        listener(event);
      } catch (err) {
        this.deps.log.error({ err, topic: event.topic }, 'ingest listener failed');
      }
    }
  }
}
