import { isObject } from 'lookout/core';
import type { IngestedMessage } from '../../bus-cache/src/service.js';
import type { HistoryEvent, MinuteRow } from './service.js';
import { MAX_TRACKS_PER_MINUTE } from './sqlite-history-store.js';

export const MINUTE_MS = 60_000;
/** Tracks of a class in a minute up to which the list itself is scanned for a track id. */
const SCAN_TRACKS = 32;
/** Bytes of one event's body kept (an incident's JSON past it is cut to its type and time). */
const MAX_EVENT_BODY = 8192;

/**
 * Folds the bus-cache's messages into per device and minute rows in memory, for the store to write
 * in one transaction per flush: what runs per message is a few map updates, never a write.
 */
export class MinuteAggregator {
  private minutes = new Map<string, MinuteRow>();
  /** Each device's row of the minute it was last heard in: 10 Hz messages find it without building the key. */
  private current = new Map<string, MinuteRow>();
  /** Detections per class of the message being folded (cleared for each, never reallocated). */
  private readonly perClass = new Map<number, number>();
  /** The track ids of each class entry of a row, as a set: a busy minute holds up to MAX_TRACKS_PER_MINUTE of them, not scanned per detection. */
  private trackSets = new WeakMap<object, Set<number>>();
  private events: HistoryEvent[] = [];
  /** The device's state the next minute starts from (a status says thermal state on change only). */
  private readonly carried = new Map<string, { thermal: string | null; suspended: boolean; storage: string | null; online: boolean | null }>();

  constructor(private readonly maxPendingEvents = 50_000) {}

  add(m: IngestedMessage): void {
    const msg = m.message;
    const at = m.receivedAt;
    if (m.key === 'dets') {
      const row = this.row(m.deviceId, at);
      // A device another replica owns (a hub replica that divides the apply): the minute is there
      // with the state it carries, its counts come from the owner's rows (shared-minutes.ts).
      if (m.foreign) return;
      row.frames++;
      const persons = typeof msg.person_count === 'number' ? msg.person_count : 0;
      row.personMax = Math.max(row.personMax, persons);
      row.personSum += persons;
      const perClass = this.perClass;
      perClass.clear();
      for (const d of Array.isArray(msg.dets) ? msg.dets : []) {
        if (!isObject(d) || typeof d.c !== 'number') continue;
        perClass.set(d.c, (perClass.get(d.c) ?? 0) + 1);
        const cls = (row.classes[d.c] ??= { max: 0, sum: 0, tracks: [] });
        if (typeof d.track_id === 'number' && cls.tracks.length < MAX_TRACKS_PER_MINUTE) {
          // A short list is scanned (faster than a set); past SCAN_TRACKS the class keeps a set beside it.
          if (cls.tracks.length < SCAN_TRACKS) {
            if (!cls.tracks.includes(d.track_id)) cls.tracks.push(d.track_id);
            continue;
          }
          let seen = this.trackSets.get(cls);
          if (!seen) this.trackSets.set(cls, (seen = new Set(cls.tracks)));
          if (!seen.has(d.track_id)) {
            seen.add(d.track_id);
            cls.tracks.push(d.track_id);
          }
        }
      }
      for (const [c, n] of perClass) {
        const cls = row.classes[c];
        cls.max = Math.max(cls.max, n);
        cls.sum += n;
        row.lastSeen[c] = at;
      }
      return;
    }
    if (m.key === 'status') {
      const carried = this.carriedOf(m.deviceId);
      if ('thermal_state' in msg) carried.thermal = typeof msg.thermal_state === 'string' ? msg.thermal_state : null;
      if ('detection_suspended' in msg) carried.suspended = isObject(msg.detection_suspended);
      const online = msg.state === 'online';
      if (typeof msg.state === 'string' && carried.online !== online) {
        carried.online = online;
        this.event({ deviceId: m.deviceId, at, kind: 'presence', name: online ? 'online' : 'offline', trackId: null, body: { state: msg.state } });
      }
      const row = this.row(m.deviceId, at);
      row.thermalState = carried.thermal;
      row.suspended ||= carried.suspended;
      return;
    }
    if (m.key === 'health') {
      const carried = this.carriedOf(m.deviceId);
      if (typeof msg.storage_health === 'string') carried.storage = msg.storage_health;
      this.row(m.deviceId, at).storageHealth = carried.storage;
      return;
    }
    if (m.key === 'data_manifest') {
      for (const c of Array.isArray(msg.chunks) ? msg.chunks : []) {
        if (isObject(c) && typeof c.name === 'string')
          this.event({ deviceId: m.deviceId, at: chunkTime(c, at), kind: 'chunk', name: c.name, trackId: null, body: c });
      }
      return;
    }
    if (m.key === 'events/+') {
      const type = m.suffix.slice('events/'.length);
      const kind = type === 'ocr' ? 'ocr' : 'event';
      const trackId = typeof msg.track_id === 'number' ? msg.track_id : null;
      this.event({ deviceId: m.deviceId, at, kind, name: type, trackId, body: bounded(msg) });
    }
  }

  /** An event from elsewhere than the bus (the debug ring's understandings and audits), written with the next flush. */
  addEvent(e: HistoryEvent): void {
    this.event(e);
  }

  /** Hands over what was gathered since the last drain. */
  drain(): { minutes: MinuteRow[]; events: HistoryEvent[] } {
    const out = { minutes: [...this.minutes.values()], events: this.events };
    this.minutes = new Map();
    this.current = new Map();
    this.trackSets = new WeakMap();
    this.events = [];
    return out;
  }

  private row(deviceId: string, at: number): MinuteRow {
    const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    const last = this.current.get(deviceId);
    if (last !== undefined && last.minute === minute) return last;
    const row = this.rowOf(deviceId, minute);
    this.current.set(deviceId, row);
    return row;
  }

  private rowOf(deviceId: string, minute: number): MinuteRow {
    const key = `${deviceId}\u0000${minute}`;
    let row = this.minutes.get(key);
    if (!row) {
      const carried = this.carriedOf(deviceId);
      row = {
        deviceId,
        minute,
        frames: 0,
        personMax: 0,
        personSum: 0,
        classes: {},
        lastSeen: {},
        thermalState: carried.thermal,
        suspended: carried.suspended,
        storageHealth: carried.storage,
      };
      this.minutes.set(key, row);
    }
    return row;
  }

  private carriedOf(deviceId: string) {
    let c = this.carried.get(deviceId);
    if (!c) this.carried.set(deviceId, (c = { thermal: null, suspended: false, storage: null, online: null }));
    return c;
  }

  private event(e: HistoryEvent): void {
    // Bounded while the store is away: the oldest pending events give way.
    if (this.events.length >= this.maxPendingEvents) this.events.shift();
    this.events.push(e);
  }
}

function chunkTime(c: Record<string, unknown>, fallback: number): number {
  const t = typeof c.started_at === 'string' ? Date.parse(c.started_at) : NaN;
  return Number.isFinite(t) ? t : fallback;
}

function bounded(msg: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(msg);
  if (json.length <= MAX_EVENT_BODY) return msg;
  return { truncated: true, timestamp: msg.timestamp ?? null, type: msg.type ?? null, track_id: msg.track_id ?? null };
}
