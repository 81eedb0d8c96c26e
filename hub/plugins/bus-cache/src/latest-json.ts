import type { DeviceCache } from './device-cache.js';
import { entryView } from './entry-view.js';

/** Written per request. */
const CLOCK_FIELDS = new Set(['age_s', 'stale', 'online']);
/** Values that are stored messages or arrays never changed in place (a new one replaces them). */
const MESSAGE_FIELDS = new Set(['status', 'payload', 'dets', 'health', 'recent_chunks']);

const STALE = ',"stale":true,"online":false}';
const FRESH_ONLINE = ',"stale":false,"online":true}';
const FRESH_OFFLINE = ',"stale":false,"online":false}';

interface Made {
  version: number;
  /** `"<id>":` and the entry's JSON without its closing brace and the fields that move with the clock. */
  prefix: string;
  idChars: number;
  statusOnline: boolean;
  newestAt: number;
}

/**
 * `GET /fleet/mqtt/latest` as text made of pieces: each device's entry is serialised once when it
 * changes (DeviceCache.version), and only what moves with the clock (age_s, stale, online) is
 * written per request. With a thousand devices most of them did not change between two reads, so
 * the answer costs little more than joining strings (test/bench/hub-latest.bench.ts measures it
 * beside a plain JSON.stringify of the same answer). The entry is exactly entryView's: the test of
 * this file parses both and compares.
 */
export class LatestJson {
  private readonly made = new WeakMap<DeviceCache, Made>();
  /** JSON of the stored messages (and of the arrays taken whole from them), made once each. */
  private readonly messages = new WeakMap<object, string>();
  private sortedIds: string[] = [];
  private sortedFor = -1;

  constructor(private readonly staleSec: number) {}

  /** Device ids in order, remade only when a device was added or removed (`membership`). */
  ids(devices: ReadonlyMap<string, DeviceCache>, membership: number): string[] {
    if (membership !== this.sortedFor) {
      this.sortedIds = [...devices.keys()].sort();
      this.sortedFor = membership;
    }
    return this.sortedIds;
  }

  /** One device's entry at `now` as JSON (the route joins them itself, without this copy). */
  entry(d: DeviceCache, now: number): string {
    const m = this.made_(d, now);
    const age = Math.max(0, (now - m.newestAt) / 1000);
    const stale = age > this.staleSec;
    return `${m.prefix.slice(m.idChars + 1)},"age_s":${Math.round(age * 1000) / 1000},"stale":${stale},"online":${m.statusOnline && !stale}}`;
  }

  private made_(d: DeviceCache, now: number): Made {
    let m = this.made.get(d);
    if (!m || m.version !== d.version) {
      const id = JSON.stringify(d.deviceId);
      m = {
        version: d.version,
        prefix: [id, ':', this.head(d, now)].join(''),
        idChars: id.length,
        statusOnline: d.latest.get('status')?.message.state === 'online',
        newestAt: d.newestAt,
      };
      this.made.set(d, m);
    }
    return m;
  }

  /**
   * The entry's fields but the clock's, as `{"k":v,…` (no closing brace). A device that changed
   * usually changed one topic: the messages it still holds keep their JSON (by identity: a stored
   * message is never modified, a new one replaces it), only the new one is serialised.
   */
  private head(d: DeviceCache, now: number): string {
    const view = entryView(d, this.staleSec, now) as unknown as Record<string, unknown>;
    const fields: string[] = [];
    for (const key of Object.keys(view)) {
      if (CLOCK_FIELDS.has(key)) continue;
      const value = view[key];
      if (value === undefined) continue;
      const json = MESSAGE_FIELDS.has(key) && typeof value === 'object' && value !== null ? this.messageJson(value) : JSON.stringify(value);
      fields.push(`${JSON.stringify(key)}:${json}`);
    }
    // Joined from an array: one flat string, copied as it is per request (a string built by += is a tree walked each time).
    return `{${fields.join(',')}`;
  }

  private messageJson(value: object): string {
    let json = this.messages.get(value);
    if (json === undefined) {
      json = JSON.stringify(value);
      this.messages.set(value, json);
    }
    return json;
  }

  /** The whole answer. */
  answer(devices: ReadonlyMap<string, DeviceCache>, ids: readonly string[], now: number, staleFilter: string | undefined): string {
    const parts: string[] = ['{"devices":{'];
    let count = 0;
    for (const id of ids) {
      const d = devices.get(id);
      if (!d) continue;
      const m = this.made_(d, now);
      const age = Math.max(0, (now - m.newestAt) / 1000);
      const stale = age > this.staleSec;
      if (staleFilter !== undefined && String(stale) !== staleFilter) continue;
      // Pushed as pieces and joined once: the cached prefix is copied, never re-walked.
      if (count++ > 0) parts.push(',');
      parts.push(m.prefix, ',"age_s":', String(Math.round(age * 1000) / 1000), stale ? STALE : m.statusOnline ? FRESH_ONLINE : FRESH_OFFLINE);
    }
    parts.push(`},"count":${count},"stale_sec":${this.staleSec},"generated_at":"${new Date(now).toISOString()}"}`);
    return parts.join('');
  }
}
