import { z } from 'zod';
import type { DeviceCache } from './device-cache.js';
import { entryView } from './entry-view.js';
import { compileJsonText, compileJsonWriter, compileObjectWriter, Prewritten, RecordEntries, type JsonPieces, type JsonSchema } from './json-writer.js';
import { LatestResponse } from './schemas.js';

/** The answer's declared shape (the route's response schema), as JSON Schema. */
const ANSWER_SCHEMA = z.toJSONSchema(LatestResponse, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
const ENTRY_SCHEMA = (ANSWER_SCHEMA.properties!.devices.additionalProperties as JsonSchema | undefined) ?? {};

/** Written per request: they move with the clock. */
const CLOCK_FIELDS: ReadonlySet<string> = new Set(['age_s', 'stale', 'online']);
/** Values that are stored messages or arrays never changed in place (a new one replaces them). */
const MESSAGE_FIELDS: ReadonlySet<string> = new Set(['status', 'payload', 'dets', 'health', 'recent_chunks']);

/** The answer's writer: `devices` given as RecordEntries of Prewritten entries. */
const writeAnswer = compileJsonWriter(ANSWER_SCHEMA);
/** The clock fields in the order the entry's writer leaves their holes (the schema's), each with its writer. */
const CLOCKS = Object.entries(ENTRY_SCHEMA.properties ?? {})
  .filter(([key]) => CLOCK_FIELDS.has(key))
  .map(([key, schema]) => ({ key: key as keyof Clock, json: compileJsonText(schema) }));
/** Characters up to which a segment between two clock fields is joined with the value after it. */
const SHORT_SEGMENT = 64;

type Clock = { age_s: number; stale: boolean; online: boolean };

interface Made {
  version: number;
  /** The entry's JSON around its clock fields: `segments[i]`, then the value of `CLOCKS[i]`, …, then the last segment. */
  segments: string[];
  statusOnline: boolean;
  newestAt: number;
  /** The device's place in the answer's `devices`: its id and its entry, written at the answer's moment. */
  pair: readonly [string, Prewritten];
}

/**
 * `GET /fleet/mqtt/latest` as text, written by writers compiled from the route's response schema
 * (json-writer.ts), in pieces: each device's entry is written once when it changes
 * (DeviceCache.version), with holes for what moves with the clock (age_s, stale, online), which
 * alone is written per request. With a thousand devices most of them did not change between two
 * reads, so the answer costs little more than joining strings (test/bench/hub-latest.bench.ts
 * measures it beside a plain JSON.stringify of the same answer). The entry's values are entryView's.
 */
export class LatestJson {
  private readonly made = new WeakMap<DeviceCache, Made>();
  private readonly writeEntry;
  private sortedIds: string[] = [];
  private sortedFor = -1;
  /** The moment of the answer being written, and its clock fields (one object, filled per device). */
  private now = 0;
  private readonly clockNow: Clock = { age_s: 0, stale: false, online: false };

  constructor(private readonly staleSec: number) {
    // The stored messages keep their JSON by identity: a device that changed usually changed one topic.
    this.writeEntry = compileObjectWriter(ENTRY_SCHEMA, { holes: CLOCK_FIELDS, once: { keys: MESSAGE_FIELDS, json: new WeakMap() } });
  }

  /** Device ids in order, remade only when a device was added or removed (`membership`). */
  ids(devices: ReadonlyMap<string, DeviceCache>, membership: number): string[] {
    if (membership !== this.sortedFor) {
      this.sortedIds = [...devices.keys()].sort();
      this.sortedFor = membership;
    }
    return this.sortedIds;
  }

  /** The whole answer. */
  answer(devices: ReadonlyMap<string, DeviceCache>, ids: readonly string[], now: number, staleFilter: string | undefined): string {
    const shown: (readonly [string, Prewritten])[] = [];
    for (const id of ids) {
      const d = devices.get(id);
      if (!d) continue;
      const m = this.made_(d);
      if (staleFilter !== undefined && String(this.clock(m, now).stale) !== staleFilter) continue;
      shown.push(m.pair);
    }
    this.now = now;
    const out: JsonPieces = [];
    writeAnswer({ devices: new RecordEntries(shown), count: shown.length, stale_sec: this.staleSec, generated_at: new Date(now).toISOString() }, out);
    // Joined once: the cached segments are copied, never re-walked.
    return out.join('');
  }

  private writeAt(m: Made, now: number, out: JsonPieces): void {
    const clock = this.clock(m, now);
    for (let i = 0; i < CLOCKS.length; i++) {
      // A short segment (`,"stale":`) goes in one piece with the value after it: fewer pieces to join.
      const segment = m.segments[i];
      if (segment.length > SHORT_SEGMENT) out.push(segment, CLOCKS[i].json(clock[CLOCKS[i].key]));
      else out.push(segment + CLOCKS[i].json(clock[CLOCKS[i].key]));
    }
    out.push(m.segments[CLOCKS.length]);
  }

  /** The clock fields at `now`, as entryView computes them (in the one object kept for it). */
  private clock(m: Made, now: number): Clock {
    const age = Math.max(0, (now - m.newestAt) / 1000);
    const c = this.clockNow;
    c.age_s = Math.round(age * 1000) / 1000;
    c.stale = age > this.staleSec;
    c.online = m.statusOnline && !c.stale;
    return c;
  }

  private made_(d: DeviceCache): Made {
    let m = this.made.get(d);
    if (!m || m.version !== d.version) {
      // The clock fields are holes: the moment given to entryView makes no difference to what is kept.
      const view = entryView(d, this.staleSec, 0);
      const pieces: JsonPieces = [];
      this.writeEntry(view, pieces);
      const segments: string[] = [];
      let run: string[] = [];
      for (const piece of pieces) {
        if (piece !== null) run.push(piece);
        else {
          segments.push(run.join(''));
          run = [];
        }
      }
      // Joined from an array: one flat string, copied as it is per request (a string built by += is a tree walked each time).
      segments.push(run.join(''));
      const made: Made = {
        version: d.version,
        segments,
        statusOnline: view.status?.state === 'online',
        newestAt: d.newestAt,
        pair: [d.deviceId, new Prewritten((out) => this.writeAt(made, this.now, out))],
      };
      m = made;
      this.made.set(d, m);
    }
    return m;
  }
}
