import { BUS_CONTRACTS, contractForTopic, jsonDeeperThan, type BusSuffix, type Logger, type TopicContract, type HubMetricsPort } from 'lookout/core';
import { compileContract, type ContractCheck } from './compiled-contract.js';
import { AdmissionRules } from './admission-rules.js';
import { EarlyMessages, type Early, type HoldLimits } from './early-messages.js';
import type { DebugRing } from '../../debug-ring/src/service.js';
import { countInvalid, DeviceCache } from './device-cache.js';
import { MAX_TOPIC_CHARS } from './subscriptions.js';
import type { IngestedMessage, IngestStatus, InvalidReason, InvalidStats } from './service.js';

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

const ALERT_TYPE = /incident|anomal|alert/i;
const MAX_ISSUE_CHARS = 300;
export const HOT_CONTRACTS: BusSuffix[] = ['dets', 'telemetry'];
/** Contracts whose device_id field names the publishing device itself. */
const SELF_NAMING = new Set<string>(['hello', 'status', 'health']);

type KnownTopic = TopicContract & { topic: string };

/**
 * Every bus message passes here once: size, JSON, depth and wire-contract checks, then the
 * per-device latest cache. A refused message never touches what the cache holds for its device;
 * it is counted per device and topic and recorded in the debug ring with the reason.
 *
 * Only a known device gets an entry: one that announced a valid hello, or one an admission rule
 * names (the registry file's devices, the bus identity's). Anything else under `devices/<id>/` is
 * counted and dropped, so a made-up id never appears in /fleet/mqtt/latest. At most `maxDevices`
 * entries are held; when full, a device a rule admits takes the place of the longest-silent one no
 * rule admits (hello-only), so a flood of made-up hellos cannot lock out the operator's devices.
 *
 * A valid message of a device not known yet waits a short while (EarlyMessages, bounded): where a
 * device's messages come through different paths (hub replicas applying one shared stream), its
 * status can come before its hello. Once the device is known they are applied in their order; when
 * the wait ends they are refused and counted as any unknown device's message.
 */
export class Ingest {
  readonly devices = new Map<string, DeviceCache>();
  /** Bumped when a device entry is added or removed (the served id list is remade only then). */
  membership = 0;
  readonly admission = new AdmissionRules();
  private readonly early: EarlyMessages;
  /** Valid messages of devices that are not known (no hello, no admission rule): dropped. */
  refusedUnknown = 0;
  /** Invalid counts of devices that never sent a valid message; bounded, oldest forgotten first. */
  private readonly invalidOnly = new Map<string, Map<string, InvalidStats>>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private messages = 0;
  private valid = 0;
  private invalid = 0;
  private untrackedInvalid = 0;
  private refusedDevices = 0;
  private lastMessageAt: number | null = null;
  private readonly invalidByTopic: Record<string, number> = {};
  private readonly invalidByReason: Record<string, number> = {};
  private readonly contracts = new Map<string, KnownTopic | null>();
  /** Compiled checks of the 10 Hz contracts; the others go through zod directly. */
  private readonly checks = new Map<string, ContractCheck>(HOT_CONTRACTS.map((k) => [k, compileContract(BUS_CONTRACTS[k].schema)]));

  constructor(
    private readonly limits: IngestLimits,
    private readonly deps: { metrics?: HubMetricsPort; ring?: DebugRing; log: Logger; now?: () => number; connected: () => boolean },
  ) {
    this.early = new EarlyMessages(limits.hold);
  }

  /** Valid messages of devices not known yet that wait for them now. */
  get heldUnknown(): number {
    return this.early.size;
  }

  /** Bytes of those messages. */
  get heldBytes(): number {
    return this.early.heldBytes;
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
   * that every replica dates it alike.
   */
  handle(incomingTopic: string, payload: Buffer, meta: { retain: boolean; receivedAt?: number }, heldAt?: number): void {
    const now = heldAt ?? meta.receivedAt ?? this.deps.now?.() ?? Date.now();
    if (heldAt === undefined) {
      this.messages++;
      this.lastMessageAt = now;
    }
    if (incomingTopic.length > MAX_TOPIC_CHARS) {
      this.deps.metrics?.ingested('unknown', now);
      return this.refuse(
        cut(incomingTopic, 128),
        undefined,
        '(none)',
        'unknown',
        'unknown_topic',
        payload,
        now,
        `topic of ${incomingTopic.length} characters (limit ${MAX_TOPIC_CHARS})`,
      );
    }
    const contract = this.contractOf(incomingTopic);
    const metricTopic = contract?.key ?? 'unknown';
    if (heldAt === undefined) this.deps.metrics?.ingested(metricTopic, now);
    if (!contract)
      return this.refuse(
        incomingTopic,
        deviceOf(incomingTopic),
        suffixOf(incomingTopic),
        'unknown',
        'unknown_topic',
        payload,
        now,
        'no wire contract for this topic',
      );
    const { deviceId, suffix, key, topic } = contract;
    if (payload.length > this.limits.maxMessageBytes) {
      return this.refuse(topic, deviceId, suffix, key, 'oversized', payload, now, `${payload.length} bytes, limit ${this.limits.maxMessageBytes}`);
    }
    if (payload.length === 0) return this.refuse(topic, deviceId, suffix, key, 'empty', payload, now, 'empty payload (a cleared retained message)');
    if (jsonDeeperThan(payload, this.limits.maxDepth)) {
      return this.refuse(topic, deviceId, suffix, key, 'too_deep', payload, now, `nested deeper than ${this.limits.maxDepth}`);
    }
    let value: unknown;
    try {
      value = JSON.parse(payload.toString('utf8'));
    } catch (err) {
      return this.refuse(topic, deviceId, suffix, key, 'not_json', payload, now, (err as Error).message);
    }
    const parsed = (this.checks.get(key) ?? contract.contract.schema).safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue.path.length ? issue.path.map(String).join('.') : '(root)';
      return this.refuse(topic, deviceId, suffix, key, 'schema', payload, now, `${where}: ${issue.message}`);
    }
    const message = parsed.data as Record<string, unknown>;
    // A device speaks only on its own topics: a hello naming another device would re-register it
    // (its tool calls would go to the announced address), a status would mark it offline.
    if (SELF_NAMING.has(key) && typeof message.device_id === 'string' && message.device_id !== deviceId) {
      return this.refuse(
        topic,
        deviceId,
        suffix,
        key,
        'schema',
        payload,
        now,
        `device_id: "${message.device_id.slice(0, 128)}" is not the device of its topic (${deviceId})`,
      );
    }
    let device = this.devices.get(deviceId);
    let waited: Early[] | undefined;
    if (!device) {
      const admitted = this.admission.admits(deviceId);
      if (key !== 'hello' && !admitted) {
        // Its hello (or the registry's word) may still come: at start-up, or from another path (hub replicas).
        if (heldAt === undefined && this.early.hold(deviceId, topic, payload, meta.retain, now, this.deps.now?.() ?? Date.now())) return;
        return this.unknownDevice(topic, deviceId, key, payload, now);
      }
      if (this.devices.size >= this.limits.maxDevices && !(admitted && this.evictUnadmitted(deviceId))) {
        this.refusedDevices++;
        return;
      }
      device = new DeviceCache(deviceId, this.deviceLimits);
      const earlier = this.invalidOnly.get(deviceId);
      if (earlier) {
        device.invalid = earlier;
        this.invalidOnly.delete(deviceId);
      }
      this.devices.set(deviceId, device);
      this.membership++;
      // Known from now on: what waited for it is applied, after its hello (which the device sent
      // first), or else before this message (which came after them).
      waited = this.early.take(deviceId);
      if (waited && key !== 'hello') {
        this.replay(waited);
        waited = undefined;
      }
    }
    this.apply(device, key, suffix, topic, message, meta.retain, now);
    if (waited) this.replay(waited);
  }

  private apply(device: DeviceCache, key: BusSuffix, suffix: string, topic: string, message: Record<string, unknown>, retain: boolean, now: number): void {
    this.valid++;
    // A retained message may be old: it dates from its own timestamp, not from when it reached us.
    const stamped = retain && typeof message.timestamp === 'string' ? Date.parse(message.timestamp) : NaN;
    const sentAt = Number.isFinite(stamped) ? Math.min(stamped, now) : now;
    const previous = device.store(suffix, message, now, retain, sentAt);
    // An older message than the latest held changes nothing but its count, except an event, which is one of its own.
    if (device.wasOlder && key !== 'events/+') return;
    if (key !== 'dets' && key !== 'telemetry') this.sideEffects(device, key, suffix, topic, message, previous, now);
    this.deps.ring?.ingest(device.deviceId, topic, suffix, now);
    const forKey = this.listeners.get(key);
    const forAll = this.listeners.get('*');
    if ((forKey && forKey.size > 0) || (forAll && forAll.size > 0)) {
      const event: IngestedMessage = { topic, deviceId: device.deviceId, suffix, key, message, receivedAt: now, retain };
      this.emit(forKey, event);
      this.emit(forAll, event);
    }
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
    let restored = 0;
    for (const d of devices) {
      if (this.devices.size >= this.limits.maxDevices) break;
      if (this.devices.has(d.deviceId)) continue;
      this.devices.set(d.deviceId, d);
      this.membership++;
      restored++;
    }
    return restored;
  }

  /**
   * Every plugin has started, so every admission rule is in place: the messages of devices a rule
   * admits are applied (in arrival order); the others wait their window from now.
   */
  settle(): void {
    const now = this.deps.now?.() ?? Date.now();
    for (const deviceId of this.early.settle(now)) {
      if (this.admission.admits(deviceId)) this.replay(this.early.take(deviceId));
    }
    // Without a window (0) the others are refused now, as they would be from now on.
    this.expireHeld(now);
  }

  /**
   * Ends the wait of the messages held for a window (called on a timer): refused and counted as an
   * unknown device's, dated when they arrived, unless a rule admits their device by now. Returns
   * how many messages it judged.
   */
  expireHeld(now = this.deps.now?.() ?? Date.now()): number {
    const ended = this.early.expire(now, (id) => this.admission.admits(id));
    this.replay(ended);
    return ended.length;
  }

  /** Judges messages that waited, in their order, as they would have been when they arrived. */
  private replay(messages: readonly Early[] | undefined): void {
    if (!messages) return;
    for (const m of messages) this.handle(m.topic, m.payload, { retain: m.retain }, m.at);
  }

  /** Topics repeat (a few per device): their contracts are looked up once; a flood of new ones only resets the memo. */
  private contractOf(topic: string): KnownTopic | undefined {
    let c = this.contracts.get(topic);
    if (c === undefined) {
      const found = contractForTopic(topic);
      // The topic string kept here is the one stored downstream (ring, events), not each message's copy.
      c = found ? { ...found, topic } : null;
      if (this.contracts.size >= 50_000) this.contracts.clear();
      this.contracts.set(topic, c);
    }
    return c ?? undefined;
  }

  status(): IngestStatus {
    return {
      connected: this.deps.connected(),
      messages: this.messages,
      valid: this.valid,
      invalid: this.invalid,
      lastMessageAt: this.lastMessageAt,
      ratePerSec: this.deps.metrics?.ingestRate() ?? 0,
      invalidByTopic: { ...this.invalidByTopic },
      invalidByReason: { ...this.invalidByReason },
      devices: this.devices.size,
      untrackedInvalid: this.untrackedInvalid,
      refusedDevices: this.refusedDevices,
    };
  }

  private sideEffects(
    device: DeviceCache,
    key: BusSuffix,
    suffix: string,
    topic: string,
    message: Record<string, unknown>,
    previous: Record<string, unknown> | undefined,
    now: number,
  ): void {
    const ring = this.deps.ring;
    if (key === 'data_manifest' && Array.isArray(message.chunks)) device.addChunks(message.chunks as Record<string, unknown>[]);
    else if (key === 'events/+') {
      const type = suffix.startsWith('events/') ? suffix.slice('events/'.length) : typeof message.type === 'string' ? message.type : 'event';
      if (ALERT_TYPE.test(type)) device.addAlert({ ...message, type, topic, received_at: new Date(now).toISOString() }); // ours win over the device's fields
    } else if (key === 'status' && previous?.state !== message.state) {
      ring?.record(
        {
          kind: 'presence',
          device_id: device.deviceId,
          topic,
          message: `${device.deviceId} is ${String(message.state)}`,
          details: { state: message.state, previous: previous?.state ?? null },
        },
        now,
      );
    } else if (key === 'health' && previous?.storage_health !== message.storage_health) {
      ring?.record(
        {
          kind: 'recorder_status',
          device_id: device.deviceId,
          topic,
          message: `storage_health ${JSON.stringify(previous?.storage_health ?? 'unknown')} → ${JSON.stringify(message.storage_health)}`,
          details: { storage_health: message.storage_health, previous: previous?.storage_health ?? null, storage: message.storage },
        },
        now,
      );
    }
  }

  private refuse(
    topic: string,
    deviceId: string | undefined,
    suffix: string,
    key: string,
    reason: InvalidReason,
    payload: Buffer,
    now: number,
    fullIssue: string,
  ): void {
    // An issue may quote the message (zod names a record key in its path): a refused message keeps no more of itself than its preview.
    const issue = cut(fullIssue, MAX_ISSUE_CHARS);
    this.invalid++;
    this.invalidByTopic[key] = (this.invalidByTopic[key] ?? 0) + 1;
    this.invalidByReason[reason] = (this.invalidByReason[reason] ?? 0) + 1;
    this.deps.metrics?.invalid(key, reason);
    if (deviceId !== undefined) {
      const device = this.devices.get(deviceId);
      if (device) device.countInvalid(suffix, reason, now, issue);
      else this.countUntracked(deviceId, suffix, reason, now, issue);
    } else this.untrackedInvalid++;
    const details: Record<string, unknown> = { reason, issue, bytes: payload.length, preview: preview(payload) };
    const event = { kind: 'ingest_invalid', topic: topic.slice(0, 256), message: `${reason}: ${issue}`.slice(0, MAX_ISSUE_CHARS), details };
    this.deps.ring?.record(deviceId !== undefined ? { ...event, device_id: deviceId } : event, now);
  }

  /** A valid message of a device nobody announced: counted and dropped, its id never stored. */
  private unknownDevice(topic: string, deviceId: string, key: string, payload: Buffer, now: number): void {
    this.refusedUnknown++;
    this.deps.metrics?.invalid(key, 'unknown_device');
    const issue = `${cut(deviceId, 128)} is not a known device: no hello announced it and the registry does not name it`;
    this.deps.ring?.record(
      {
        kind: 'ingest_invalid',
        topic: topic.slice(0, 256),
        message: `unknown_device: ${issue}`.slice(0, MAX_ISSUE_CHARS),
        details: { reason: 'unknown_device', issue, bytes: payload.length, at: new Date(now).toISOString() },
      },
      now,
    );
  }

  /** Frees one place for an admitted device: the longest-silent entry that no rule admits goes. */
  private evictUnadmitted(forDevice: string): boolean {
    let oldest: DeviceCache | undefined;
    for (const d of this.devices.values()) {
      if ((oldest === undefined || d.newestAt < oldest.newestAt) && !this.admission.admits(d.deviceId)) oldest = d;
    }
    if (!oldest) return false;
    this.devices.delete(oldest.deviceId);
    this.membership++;
    this.deps.ring?.record({
      kind: 'hub',
      device_id: oldest.deviceId,
      message: `cache full: ${oldest.deviceId} (announced by hello only) forgotten for ${cut(forDevice, 128)}, which the registry names`,
    });
    return true;
  }

  private countUntracked(deviceId: string, suffix: string, reason: InvalidReason, now: number, issue: string): void {
    let stats = this.invalidOnly.get(deviceId);
    if (!stats) {
      if (this.invalidOnly.size >= this.limits.maxDevices) {
        const oldest = this.invalidOnly.keys().next().value;
        if (oldest !== undefined) this.invalidOnly.delete(oldest);
        this.untrackedInvalid++;
      }
      this.invalidOnly.set(deviceId, (stats = new Map<string, InvalidStats>()));
    }
    countInvalid(stats, suffix, reason, now, issue);
  }

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

/**
 * At most `max` characters, as a string of their own: V8 makes a slice a view that keeps the
 * whole original alive, which for a long topic or issue is what the cut was meant to drop.
 */
function cut(text: string, max: number): string {
  return text.length <= max ? text : Buffer.from(`${text.slice(0, max - 1)}\u2026`).toString();
}

function deviceOf(topic: string): string | undefined {
  const parts = topic.split('/', 3);
  return parts[0] === 'devices' && parts[1] ? parts[1].slice(0, 128) : undefined;
}

function suffixOf(topic: string): string {
  const parts = topic.split('/');
  return parts.slice(2).join('/').slice(0, 128) || '(none)';
}

/** The first bytes as text, control characters shown as dots: enough to recognise a payload. */
function preview(payload: Buffer): string {
  return (
    payload
      .subarray(0, 96)
      .toString('utf8')
      // eslint-disable-next-line no-control-regex -- control characters are exactly what a preview must not print
      .replace(/[\u0000-\u001f\u007f-\u009f\ufffd]/g, '.')
  );
}
