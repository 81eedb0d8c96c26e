import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import type { HistoryEvent, HistoryStore, HistoryUsage, MinuteRow, PeopleTotals } from './service.js';

/** Track ids kept per device, minute and class: a scene of thousands of ids is bounded, the counts stay exact up to it. */
export const MAX_TRACKS_PER_MINUTE = 2000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS minutes (
  device_id TEXT NOT NULL,
  minute INTEGER NOT NULL,
  frames INTEGER NOT NULL,
  person_max INTEGER NOT NULL,
  person_sum INTEGER NOT NULL,
  classes TEXT NOT NULL,
  last_seen TEXT NOT NULL,
  thermal_state TEXT,
  suspended INTEGER NOT NULL,
  storage_health TEXT,
  PRIMARY KEY (device_id, minute)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS minutes_by_time ON minutes (minute);
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY,
  device_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  track_id INTEGER,
  body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_device ON events (device_id, kind, at);
CREATE INDEX IF NOT EXISTS events_by_time ON events (at);
CREATE UNIQUE INDEX IF NOT EXISTS chunks_once ON events (device_id, name) WHERE kind = 'chunk';
CREATE TABLE IF NOT EXISTS class_last_seen (
  device_id TEXT NOT NULL,
  class_id INTEGER NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (device_id, class_id)
) WITHOUT ROWID;
`;

interface StoredMinute {
  device_id: string;
  minute: number;
  frames: number;
  person_max: number;
  person_sum: number;
  classes: string;
  last_seen: string;
  thermal_state: string | null;
  suspended: number;
  storage_health: string | null;
}

/** The fleet history in one SQLite file (WAL: the hub's reads never wait for a flush). */
export class SqliteHistoryStore implements HistoryStore {
  private readonly db: BetterSqlite3.Database;
  private readonly getMinute: BetterSqlite3.Statement;
  private readonly putMinute: BetterSqlite3.Statement;
  private readonly putEvent: BetterSqlite3.Statement;
  private readonly putLastSeen: BetterSqlite3.Statement;
  private readonly writeTx: (minutes: readonly MinuteRow[], events: readonly HistoryEvent[]) => void;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    this.getMinute = this.db.prepare('SELECT * FROM minutes WHERE device_id = ? AND minute = ?');
    this.putMinute = this.db.prepare(
      `INSERT OR REPLACE INTO minutes (device_id, minute, frames, person_max, person_sum, classes, last_seen, thermal_state, suspended, storage_health)
       VALUES (@device_id, @minute, @frames, @person_max, @person_sum, @classes, @last_seen, @thermal_state, @suspended, @storage_health)`,
    );
    this.putEvent = this.db.prepare('INSERT OR IGNORE INTO events (device_id, at, kind, name, track_id, body) VALUES (?, ?, ?, ?, ?, ?)');
    this.putLastSeen = this.db.prepare(
      'INSERT INTO class_last_seen (device_id, class_id, at) VALUES (?, ?, ?) ON CONFLICT (device_id, class_id) DO UPDATE SET at = MAX(at, excluded.at)',
    );
    this.writeTx = this.db.transaction((minutes: readonly MinuteRow[], events: readonly HistoryEvent[]) => {
      for (const m of minutes) {
        const old = this.getMinute.get(m.deviceId, m.minute) as StoredMinute | undefined;
        const merged = old ? mergeMinutes(fromStored(old), m) : m;
        this.putMinute.run(toStored(merged));
        for (const [c, at] of Object.entries(m.lastSeen)) this.putLastSeen.run(m.deviceId, Number(c), at);
      }
      for (const e of events) this.putEvent.run(e.deviceId, e.at, e.kind, e.name, e.trackId, JSON.stringify(e.body));
    });
  }

  write(minutes: readonly MinuteRow[], events: readonly HistoryEvent[]): void {
    if (minutes.length > 0 || events.length > 0) this.writeTx(minutes, events);
  }

  minutes(deviceIds: readonly string[], from: number, to: number): MinuteRow[] {
    const rows = this.db
      .prepare(`SELECT * FROM minutes WHERE device_id IN (SELECT value FROM json_each(?)) AND minute >= ? AND minute < ? ORDER BY minute, device_id`)
      .all(JSON.stringify(deviceIds), from, to) as StoredMinute[];
    return rows.map(fromStored);
  }

  people(deviceIds: readonly string[], from: number, to: number): PeopleTotals {
    const ids = JSON.stringify(deviceIds);
    const span = 'device_id IN (SELECT value FROM json_each(@ids)) AND minute >= @from AND minute < @to';
    // Added up and made distinct inside SQLite: no row is parsed in JavaScript.
    const totals = this.db
      .prepare(
        `SELECT COALESCE(SUM(frames), 0) AS frames, COALESCE(MAX(person_max), 0) AS person_max, COALESCE(SUM(person_sum), 0) AS person_sum,
           COUNT(DISTINCT minute) AS minutes, json_group_array(DISTINCT device_id) AS devices FROM minutes WHERE ${span}`,
      )
      .get({ ids, from, to }) as { frames: number; person_max: number; person_sum: number; minutes: number; devices: string };
    const tracks = this.db
      .prepare(
        `SELECT COUNT(*) AS n FROM (SELECT DISTINCT m.device_id, t.value FROM minutes m, json_each(m.classes, '$."0".tracks') t 
         WHERE m.device_id IN (SELECT value FROM json_each(@ids)) AND m.minute >= @from AND m.minute < @to)`,
      )
      .get({ ids, from, to }) as { n: number };
    return {
      frames: totals.frames,
      personMax: totals.person_max,
      personSum: totals.person_sum,
      uniqueTracks: tracks.n,
      minutes: totals.minutes,
      devices: (JSON.parse(totals.devices) as string[]).sort(),
    };
  }

  events(deviceIds: readonly string[], kind: HistoryEvent['kind'], from: number, to: number, limit: number): HistoryEvent[] {
    const rows = this.db
      .prepare(
        `SELECT device_id, at, kind, name, track_id, body FROM events WHERE device_id IN (SELECT value FROM json_each(?)) AND kind = ? AND at >= ? AND at < ?
         ORDER BY at DESC, id DESC LIMIT ?`,
      )
      .all(JSON.stringify(deviceIds), kind, from, to, limit) as {
      device_id: string;
      at: number;
      kind: HistoryEvent['kind'];
      name: string;
      track_id: number | null;
      body: string;
    }[];
    return rows.map((r) => ({
      deviceId: r.device_id,
      at: r.at,
      kind: r.kind,
      name: r.name,
      trackId: r.track_id,
      body: JSON.parse(r.body) as Record<string, unknown>,
    }));
  }

  understandings(incidents: readonly { deviceId: string; at: number }[]): Map<string, Record<string, unknown>> {
    const out = new Map<string, Record<string, unknown>>();
    if (incidents.length === 0) return out;
    // One indexed look-up per incident (events_by_device): a page holds at most 1000 of them.
    const get = this.db.prepare(`SELECT body FROM events WHERE device_id = ? AND kind = 'understanding' AND at = ? ORDER BY id DESC LIMIT 1`);
    for (const i of incidents) {
      const row = get.get(i.deviceId, i.at) as { body: string } | undefined;
      if (row) out.set(understandingKey(i.deviceId, i.at), JSON.parse(row.body) as Record<string, unknown>);
    }
    return out;
  }

  lastSeen(deviceIds: readonly string[], classId: number): { deviceId: string; at: number } | undefined {
    const row = (
      deviceIds.length === 0
        ? this.db.prepare('SELECT device_id, at FROM class_last_seen WHERE class_id = ? ORDER BY at DESC LIMIT 1').get(classId)
        : this.db
            .prepare('SELECT device_id, at FROM class_last_seen WHERE class_id = ? AND device_id IN (SELECT value FROM json_each(?)) ORDER BY at DESC LIMIT 1')
            .get(classId, JSON.stringify(deviceIds))
    ) as { device_id: string; at: number } | undefined;
    return row ? { deviceId: row.device_id, at: row.at } : undefined;
  }

  deviceIds(): string[] {
    const rows = this.db.prepare('SELECT device_id FROM minutes UNION SELECT device_id FROM events').all() as { device_id: string }[];
    return rows.map((r) => r.device_id);
  }

  trim(before: number, maxBytes: number): number {
    let dropped = this.dropBefore(before);
    // Over the size bound: the oldest day goes, then the next, until it fits (or nothing is left).
    for (let guard = 0; guard < 10_000 && this.usage().bytes > maxBytes; guard++) {
      const oldest = this.usage().oldest;
      if (oldest === null) break;
      const n = this.dropBefore(oldest + 86_400_000);
      dropped += n;
      this.db.pragma('wal_checkpoint(TRUNCATE)');
      this.db.exec('VACUUM');
      if (n === 0) break;
    }
    return dropped;
  }

  usage(): HistoryUsage {
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const free = this.db.pragma('freelist_count', { simple: true }) as number;
    const size = this.db.pragma('page_size', { simple: true }) as number;
    const m = this.db.prepare('SELECT COUNT(*) AS n, MIN(minute) AS oldest FROM minutes').get() as { n: number; oldest: number | null };
    const e = this.db.prepare('SELECT COUNT(*) AS n, MIN(at) AS oldest FROM events').get() as { n: number; oldest: number | null };
    const oldest = m.oldest === null ? e.oldest : e.oldest === null ? m.oldest : Math.min(m.oldest, e.oldest);
    return { bytes: (pages - free) * size, minutes: m.n, events: e.n, oldest };
  }

  close(): void {
    this.db.close();
  }

  private dropBefore(before: number): number {
    return this.db.transaction(() => {
      const a = this.db.prepare('DELETE FROM minutes WHERE minute < ?').run(before).changes;
      const b = this.db.prepare('DELETE FROM events WHERE at < ?').run(before).changes;
      const c = this.db.prepare('DELETE FROM class_last_seen WHERE at < ?').run(before).changes;
      return a + b + c;
    })();
  }
}

/** The key `understandings` answers an incident's understanding under. */
export function understandingKey(deviceId: string, at: number): string {
  return `${deviceId}\u0000${at}`;
}

/** Two parts of one device's minute (before and after a flush, or a restart) as one. */
export function mergeMinutes(a: MinuteRow, b: MinuteRow): MinuteRow {
  const classes: MinuteRow['classes'] = { ...a.classes };
  for (const [c, v] of Object.entries(b.classes)) {
    const old = classes[c];
    if (!old) {
      classes[c] = { max: v.max, sum: v.sum, tracks: [...v.tracks] };
      continue;
    }
    const tracks = new Set(old.tracks);
    for (const t of v.tracks) if (tracks.size < MAX_TRACKS_PER_MINUTE) tracks.add(t);
    classes[c] = { max: Math.max(old.max, v.max), sum: old.sum + v.sum, tracks: [...tracks] };
  }
  const lastSeen = { ...a.lastSeen };
  for (const [c, at] of Object.entries(b.lastSeen)) lastSeen[c] = Math.max(lastSeen[c] ?? 0, at);
  return {
    deviceId: a.deviceId,
    minute: a.minute,
    frames: a.frames + b.frames,
    personMax: Math.max(a.personMax, b.personMax),
    personSum: a.personSum + b.personSum,
    classes,
    thermalState: b.thermalState ?? a.thermalState,
    suspended: a.suspended || b.suspended,
    storageHealth: b.storageHealth ?? a.storageHealth,
    lastSeen,
  };
}

function toStored(m: MinuteRow): StoredMinute {
  return {
    device_id: m.deviceId,
    minute: m.minute,
    frames: m.frames,
    person_max: m.personMax,
    person_sum: m.personSum,
    classes: JSON.stringify(m.classes),
    last_seen: JSON.stringify(m.lastSeen),
    thermal_state: m.thermalState,
    suspended: m.suspended ? 1 : 0,
    storage_health: m.storageHealth,
  };
}

function fromStored(r: StoredMinute): MinuteRow {
  return {
    deviceId: r.device_id,
    minute: r.minute,
    frames: r.frames,
    personMax: r.person_max,
    personSum: r.person_sum,
    classes: JSON.parse(r.classes) as MinuteRow['classes'],
    lastSeen: JSON.parse(r.last_seen) as MinuteRow['lastSeen'],
    thermalState: r.thermal_state,
    suspended: r.suspended === 1,
    storageHealth: r.storage_health,
  };
}
