import type { DeviceSnapshot, InvalidReason, InvalidStats } from './service.js';

interface Latest {
  message: Record<string, unknown>;
  receivedAt: number;
  retain: boolean;
  count: number;
  /** The message's own stamp (epoch ms, NaN without one), parsed once: each new message is compared with it. */
  stamp?: number;
}

/** Per device: the latest valid message per topic, invalid counts per topic, chunks and alerts. */
export class DeviceCache implements DeviceSnapshot {
  readonly latest = new Map<string, Latest>();
  invalid = new Map<string, InvalidStats>();
  recentChunks: Record<string, unknown>[] = [];
  anomalyAlerts: Record<string, unknown>[] = [];
  newestAt = 0;
  /** Set when the entry was reloaded from the hub's saved state at start (its times are from before the restart). */
  restoredAt: number | undefined;
  /** The last `store` met a message older than the one it holds (kept as it was). */
  wasOlder = false;
  /** Bumped by every change, so that what is made of the entry (its JSON) is remade only when it changed. */
  version = 0;

  constructor(
    readonly deviceId: string,
    private readonly limits: { maxTopics: number; maxAlerts: number; maxChunks: number },
  ) {}

  /**
   * Stores the message as the latest of its topic; returns the one it replaces. A message older
   * than the one held (isOlder: hub replicas take a device's messages side by side, and one a
   * replica took while Redis was down, or had not acknowledged when it stopped, arrives after newer
   * ones) is counted but does not replace it, so every replica ends on the same latest whatever
   * order it applied them in; `wasOlder` then says so.
   */
  store(suffix: string, message: Record<string, unknown>, receivedAt: number, retain: boolean, sentAt: number): Record<string, unknown> | undefined {
    const current = this.latest.get(suffix);
    const previous = current?.message;
    this.wasOlder = false;
    this.version++;
    const stamp = stampOf(message);
    if (current && isOlder(stamp, receivedAt, current)) {
      if (!isRedelivery(current.message, message)) current.count++;
      if (sentAt > this.newestAt) this.newestAt = sentAt;
      this.wasOlder = true;
      return previous;
    }
    // The same message again: a QoS 1 redelivery after a broker restart, or the retained status a
    // restarted hub receives on top of the one it reloaded. Counted once, as the device sent it once.
    if (current && previous && isRedelivery(previous, message)) return previous;
    if (current) {
      current.message = message;
      current.stamp = stamp;
      current.receivedAt = receivedAt;
      current.retain = retain;
      current.count++;
    } else if (this.latest.size < this.limits.maxTopics || !suffix.startsWith('events/')) {
      this.latest.set(suffix, { message, receivedAt, retain, count: 1, stamp });
    }
    if (sentAt > this.newestAt) this.newestAt = sentAt;
    return previous;
  }

  /** Counts messages of a topic that a hub replica applied only through a newer one (its DeviceMirror), if the topic is held. */
  countUnseen(suffix: string, messages: number): void {
    const current = this.latest.get(suffix);
    if (!current) return;
    current.count += messages;
    this.version++;
  }

  addChunks(chunks: Record<string, unknown>[]): void {
    this.version++;
    const startOf = (c: Record<string, unknown>): string => (typeof c.started_at === 'string' ? c.started_at : '');
    const byStart = [...chunks].sort((a, b) => startOf(b).localeCompare(startOf(a)));
    this.recentChunks = byStart.slice(0, this.limits.maxChunks);
  }

  addAlert(alert: Record<string, unknown>): void {
    this.version++;
    // Newest first by the hub's receive time: replicas that apply two alerts in either order list them alike.
    const at = typeof alert.received_at === 'string' ? alert.received_at : '';
    let i = 0;
    const atOf = (a: Record<string, unknown>): string => (typeof a.received_at === 'string' ? a.received_at : '');
    while (i < this.anomalyAlerts.length && atOf(this.anomalyAlerts[i]) > at) i++;
    this.anomalyAlerts.splice(i, 0, alert);
    if (this.anomalyAlerts.length > this.limits.maxAlerts) this.anomalyAlerts.length = this.limits.maxAlerts;
  }

  /** Merges `fields` into the alert of `topic` received at `receivedAtIso`; false when none is held. */
  annotateAlert(topic: string, receivedAtIso: string, fields: Record<string, unknown>): boolean {
    const i = this.anomalyAlerts.findIndex((a) => a.topic === topic && a.received_at === receivedAtIso);
    if (i < 0) return false;
    this.version++;
    this.anomalyAlerts[i] = { ...this.anomalyAlerts[i], ...fields };
    return true;
  }

  countInvalid(suffix: string, reason: InvalidReason, at: number, issue?: string): void {
    this.version++;
    countInvalid(this.invalid, suffix, reason, at, issue);
  }
}

export function countInvalid(map: Map<string, InvalidStats>, suffix: string, reason: InvalidReason, at: number, issue?: string): void {
  const s = map.get(suffix);
  if (s) {
    s.count++;
    s.lastReason = reason;
    s.lastAt = at;
    if (issue === undefined) delete s.lastIssue;
    else s.lastIssue = issue;
  } else {
    const fresh: InvalidStats = { count: 1, lastReason: reason, lastAt: at };
    if (issue !== undefined) fresh.lastIssue = issue;
    // A flood of made-up suffixes stays bounded per device.
    if (map.size < 64) map.set(suffix, fresh);
  }
}

/** How far back a device's own stamp may go and still be taken for a late arrival rather than a reset clock. */
const REORDER_WINDOW_MS = 5 * 60_000;

/**
 * Whether `message` is older than the one held: by the device's own stamps when both have one and
 * they are within the reorder window (a message a stopped hub replica had not acknowledged comes
 * back late, after newer ones taken by another; a clock that jumped back further is a reset, and
 * what it says is new), else by when the hub received them.
 */
function isOlder(stamped: number, receivedAt: number, current: Latest): boolean {
  const held = (current.stamp ??= stampOf(current.message));
  if (Number.isFinite(stamped) && Number.isFinite(held)) return stamped < held && held - stamped <= REORDER_WINDOW_MS;
  return receivedAt < current.receivedAt;
}

function stampOf(message: Record<string, unknown>): number {
  return typeof message.timestamp === 'string' ? Date.parse(message.timestamp) : NaN;
}

/**
 * Devices stamp each message to the millisecond: equal stamps are compared in full. A fast device
 * (or several publishing under one id) sends two messages in one millisecond often enough that the
 * comparison is on the ingest path: it walks both values and stops at the first difference (a
 * sequence number, a box) instead of serialising both.
 */
export function isRedelivery(previous: Record<string, unknown>, message: Record<string, unknown>): boolean {
  return typeof message.timestamp === 'string' && message.timestamp === previous.timestamp && sameJson(message, previous);
}

/**
 * Whether two parsed JSON values would serialise alike (JSON.stringify(a) === JSON.stringify(b)):
 * the same primitives, arrays of the same values, objects with the same keys in the same order.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const oa = a as Record<string, unknown>;
  const ob = b as Record<string, unknown>;
  // The keys and the plain values first: two messages of one stamp differ most often in a counter
  // or a sequence number, found before walking their detections.
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i];
    if (k !== kb[i]) return false;
    const va = oa[k];
    if ((typeof va !== 'object' || va === null) && va !== ob[k]) return false;
  }
  for (let i = 0; i < ka.length; i++) {
    const va = oa[ka[i]];
    if (typeof va === 'object' && va !== null && !sameJson(va, ob[ka[i]])) return false;
  }
  return true;
}
