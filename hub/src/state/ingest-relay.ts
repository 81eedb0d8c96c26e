import { randomBytes } from 'node:crypto';
import type { IPublishPacket } from 'mqtt';
import type { Redis } from 'ioredis';
import type { MessageHandler } from 'lookout/core/host';
import { SharedSubscriber, SubscriptionTable } from 'lookout/lib/mqtt';
import type { Logger } from 'lookout/core';
import type { RedisConnection } from './redis-connection.js';
import { AppendedBatches } from './appended-batches.js';
import { DeviceMirror } from './device-mirror.js';
import { RECORD_CHANNEL_FIELD, RECORD_VALUE_FIELD, RECORD_WRITER_FIELD, ReplicaRecords } from './replica-records.js';
import { HEARTBEAT_EVERY_MS, HEARTBEAT_TTL_MS, SessionAdoption, heartbeatKey, writeHeartbeat, type LaneWill } from './session-adoption.js';
import { StreamLag } from './stream-lag.js';
import { streamIdBefore, type ResumePoint } from './stream-point.js';
import type { MembershipChange } from './stream-membership.js';
import { GroupCommit, packMessages, unpackMessages, type RelayedMessage } from './ingest-batch.js';

/** The shared-subscription group every replica of one fleet joins (`--mqtt-group`). */
export const DEFAULT_INGEST_GROUP = 'lookout-hub';
/** How long the ingest stream keeps entries: a replica restarted within it resumes exactly where its saved cache was. */
export const DEFAULT_STREAM_RETENTION_MS = 15 * 60_000;
/** Messages taken while Redis is down, applied here at once and written to the stream when it returns. */
export const DEFAULT_MAX_PENDING = 200_000;
/** Broker connections per replica taking the shared ingest side by side: one takes up to RECEIVE_MAXIMUM messages at once. */
export const DEFAULT_INGEST_CONNECTIONS = 1;
/** Messages the broker hands a connection before it has their acknowledgements (they wait for the stream). */
const RECEIVE_MAXIMUM = 1000;

/** Topics whose retained message a fresh hub must see (shared subscriptions never carry retained messages). */
const RETAINED_FILTERS = new Set(['devices/+/status', 'devices/+/hello']);
const SHARED_SUB_ID = 1;
/** Below this many entries a read waits before the next, so that entries gather (adds at most that to the latency). */
const READ_BATCH_WAIT_BELOW = 50;
const READ_BATCH_WAIT_MS = 3;
const RETAINED_SUB_ID = 2;
/** The first lane's subscription to the group's lane wills (`lookout-hub/replicas/<group>/gone`, SessionAdoption.onWill). */
const WILL_SUB_ID = 3;
const STREAM_ID = /^\d+-\d+$/;
/** What take() answers for a message it is done with at once. */
const TAKEN = Promise.resolve();
/** Messages in one stream entry at most (a few hundred KiB of telemetry). */
const MAX_ENTRY_MESSAGES = 500;
/** The field of a stream entry that changes who divides the apply (StreamMembership). */
const MEMBERSHIP_FIELD = 'm';
/** How long a stopping replica writes what it took to the stream, and (dividing the apply) reads on up to its own leave, at most each. */
const LEAVE_READ_MS = 3_000;
/** The heartbeat written before a replica's join lasts while its lanes connect (their timeout, 10 s); the rounds take over after. */
const FIRST_HEARTBEAT_TTL_MS = 15_000;
/** Entries one read takes at most: a read that brings fewer has reached the stream's end. */
const READ_COUNT = 2000;
/**
 * A saved point is read again from only while it is this share of the retention old at most: the
 * replay must reach the entries after it before the stream's trimming does.
 */
const REPLAYABLE_SHARE = 0.8;
/**
 * Writes another replica's membership change only while its heartbeat says so (alive for a join,
 * gone for a leave), checked in Redis with the write: a view read a moment earlier cannot write a
 * replica in again after its own leave (it deletes its heartbeat first), nor out while it starts
 * (it writes a heartbeat before its join). KEYS: stream, heartbeat; ARGV: join|leave, min id, fields.
 */
const WRITE_CHANGE_IF_HEARTBEAT = `local alive = redis.call('EXISTS', KEYS[2]) == 1
if (ARGV[1] == 'join') ~= alive then return false end
return redis.call('XADD', KEYS[1], 'MINID', '~', ARGV[2], '*', unpack(ARGV, 3))`;

/**
 * Writes a crashed member's leave, told by its will, once its heartbeat has missed beats (its time
 * to live below ARGV[2] ms, or gone) while still naming the process the will came from, and deletes
 * that heartbeat: the heartbeat rounds then see it gone too, and write no join for it. A process
 * whose connection only dropped keeps beating: its heartbeat never gets that low, it stays a member.
 * Answers `written`, `wait` (not missed yet) or `other` (another process beats). KEYS: stream,
 * heartbeat; ARGV: process, most time to live left, min id, fields.
 */
const WRITE_LEAVE_ONCE_BEATS_MISSED = `local beat = redis.call('GET', KEYS[2])
if beat and beat ~= ARGV[1] then return 'other' end
if beat and redis.call('PTTL', KEYS[2]) > tonumber(ARGV[2]) then return 'wait' end
redis.call('DEL', KEYS[2])
redis.call('XADD', KEYS[1], 'MINID', '~', ARGV[3], '*', unpack(ARGV, 4))
return 'written'`;
/** A heartbeat with this much time to live or less has missed its last beat by a second or more. */
const MISSED_BEATS_TTL_MS = HEARTBEAT_TTL_MS - HEARTBEAT_EVERY_MS - 1_000;
/** How often a will's leave looks at the heartbeat again. */
const MISSED_BEATS_POLL_MS = 250;

export interface IngestRelayOptions {
  redis: RedisConnection;
  /** Broker URL with its credentials (MQTT 5: mosquitto, EMQX, HiveMQ…). */
  mqttUrl: string;
  /** With mqtts://: the CAs the broker's certificate must chain to (default Node's). */
  ca?: string[];
  username?: string;
  password?: string;
  /** Stable across restarts: the broker keeps this replica's sessions (`<clientId>-<n>`, and what they had not acknowledged) for it. */
  clientId: string;
  group?: string;
  logger: Logger;
  retentionMs?: number;
  maxPending?: number;
  /** Broker connections taking messages side by side (each one at a time). Default 4. */
  connections?: number;
  /** How long the broker keeps a replica's session while it is gone. Default one hour. */
  sessionExpirySec?: number;
  /** Divides the apply (`--mirror-interval-ms`, DeviceMirror). Absent or 0: every replica applies every message. */
  mirrorIntervalMs?: number;
}

export interface RelayStatus {
  backend: 'redis';
  group: string;
  /** True while this replica cannot see what the others ingest (Redis down, or its own messages not yet written back). */
  stale: boolean;
  stale_since: string | null;
  redis_connected: boolean;
  mqtt_connected: boolean;
  /** Messages taken here while Redis was down, not yet written to the stream. */
  pending: number;
  /** Pending messages dropped because the bound was reached during a long outage. */
  pending_dropped: number;
  /** Stream id of the last entry applied here. */
  cursor: string;
  /**
   * How far behind the stream's end this replica reads (StreamLag): the newest entry's time less
   * that of the oldest not read here yet, 0 when all is read; sampled each second, null before
   * reading and while Redis is away.
   */
  read_lag_ms: number | null;
  /** How long the shared stream keeps messages (--stream-retention-s): its Redis memory is this times the message rate. */
  stream_retention_s: number;
  relayed: number;
  applied: number;
  /** Broker sessions of stopped replicas this one took over and ended (SessionAdoption). */
  adopted_sessions: number;
  /** Stream entries read a second time (a write whose reply was lost, written again) and skipped. */
  duplicates_skipped: number;
  /**
   * With --mirror-interval-ms: the live replicas the devices are shared out among; the messages of
   * devices owned by another that were replaced by a newer one before this replica applied them; the
   * devices whose messages are held now, and the event streams that have devices followed.
   */
  mirror: { interval_ms: number; replicas: number; collapsed: number; held_devices: number; followers: number } | null;
  /** Records for the other replicas (publishRecord) that could not be written. */
  records_lost: number;
}

interface Lane {
  subscriber: SharedSubscriber;
  adoption: SessionAdoption;
}

/** A message kept while Redis is away, with the number of the stream entry it is to be written in. */
type Pending = RelayedMessage & { batch: number };

/**
 * How replicas share the device ingest. Each replica takes its share of the devices' messages
 * through MQTT 5 shared subscriptions (`$share/<group>/<filter>`, QoS 1, a persistent session) and
 * appends each to one Redis stream before acknowledging it to the broker, so a message the broker
 * handed over is either in the stream or redelivered. Every replica reads the whole stream in its
 * order and feeds the bus-cache's handlers with it: the latest cache, the registry's hellos, the
 * debug ring's ingest lane and presence are the same everywhere, and each replica answers reads
 * from its local copy (no Redis round trip per request). While Redis is down a replica applies
 * what it takes at once and keeps it to append later; its view is stale (it misses the others')
 * until Redis returns and it has caught up.
 */
export class IngestRelay {
  readonly replicaId = `${randomBytes(6).toString('hex')}`;
  private readonly handlers = new SubscriptionTable();
  /** Messages taken from the broker, written to the stream a batch per entry before they are acknowledged. */
  private readonly commit = new GroupCommit<RelayedMessage>((batch) => this.commitOrKeep(batch), MAX_ENTRY_MESSAGES);
  /** Each entry this replica writes is numbered (`n`), so that one written twice is applied once. */
  private batches = 0;
  /** The entry the messages taken during an outage are gathered in, and how many it holds. */
  private outageBatch = { n: 0, size: MAX_ENTRY_MESSAGES };
  private appended = new AppendedBatches();
  private duplicatesSkipped = 0;
  private readonly subscribed = new Set<string>();
  private readonly pending: Pending[] = [];
  /** The kept messages being written back now: out of the bound's reach, in front of `pending` again if the write fails. */
  private writingBack: Pending[] = [];
  private pendingDropped = 0;
  /** What the bound dropped since the last write-back finished, told then (the others never see it). */
  private droppedNow: { count: number; firstAt: number; lastAt: number } | undefined;
  private connecting: Promise<Lane[]> | undefined;
  private connected_: Lane[] | undefined;
  private reader: Redis | undefined;
  private cursor = '0-0';
  private closed = false;
  /** Set once a replica stops: what still arrives is answered with it (never acknowledged), left in its session for the replica that takes it over. */
  private left: Promise<void> | undefined;
  /** Stopping: no membership change is asked for any more but its own leave. */
  private leaving = false;
  /** This process wrote its join (dividing the apply): it writes its leave when it stops. */
  private joined = false;
  /** The last read reached the stream's end: the others' changes are asked from an up-to-date view only, and the replica is not stale for lagging. */
  private caughtUp = false;
  private pointMoved: (() => void) | undefined;
  private reading: Promise<void> | undefined;
  private lag: StreamLag | undefined;
  private flushing: Promise<void> | undefined;
  private staleSince: number | undefined;
  private relayed = 0;
  private applied = 0;
  readonly group: string;
  private readonly streamKey: string;
  /** Where the broker publishes a lane's will: one topic per group, the lane in the payload (hub users only may write it: lib/auth/bus-acl.ts). */
  private readonly willTopic: string;
  private readonly mirror: DeviceMirror | undefined;
  /** Set while a message is applied: a read from one of its handlers does not apply held messages in the middle of it. */
  private delivering = false;
  private readonly records: ReplicaRecords;

  constructor(private readonly options: IngestRelayOptions) {
    this.group = options.group ?? DEFAULT_INGEST_GROUP;
    this.streamKey = options.redis.key('ingest');
    // Compared with every message's topic: built once.
    this.willTopic = `lookout-hub/replicas/${this.group}/gone`;
    this.records = new ReplicaRecords({
      logger: options.logger,
      append: (fields) => this.xadd(fields),
    });
    options.redis.onUp(() => {
      void this.flushPending();
      this.records.writeUnsent();
    });
    const intervalMs = options.mirrorIntervalMs ?? 0;
    if (intervalMs > 0) {
      this.mirror = new DeviceMirror({
        self: this.memberId,
        intervalMs,
        apply: (m) => this.deliver(m.topic, m.payload, { retain: m.retain, receivedAt: m.at, foreign: true, collapsed: m.collapsed, collapsedFirst: m.first }),
        applying: () => this.delivering,
      });
    }
  }

  /** Stable across restarts, this replica's first lane's broker session: the id its heartbeat and saved point go under. */
  get memberId(): string {
    return laneClientId(this.options.clientId, 0);
  }

  /** See DeviceMirror.follow: a no-op unless this replica divides the apply. */
  follow(deviceId?: string): () => void {
    return this.mirror?.follow(deviceId) ?? (() => undefined);
  }

  /**
   * Shares `value` (JSON) on `channel` with the other replicas' `onRecord` listeners, through the
   * stream (ReplicaRecords), also while this replica stops (its plugins' last records, after its
   * reading ended); kept while Redis is down.
   */
  publishRecord(channel: string, value: unknown): void {
    // `w`, the writer's stable id: a replica restarted from its saved point skips what it wrote
    // before (its own store holds it), which `o`, new at each start, would not tell.
    this.records.publish(channel, value, [RECORD_WRITER_FIELD, this.options.clientId, 'o', this.replicaId, 'n', String(++this.batches)]);
  }

  onRecord(channel: string, listener: (value: unknown) => void): () => void {
    return this.records.on(channel, listener);
  }

  /** See DeviceMirror.freshen: what is held of a device applied before it is read. */
  freshen(deviceId?: string): void {
    this.mirror?.freshen(deviceId);
  }

  /**
   * Where to start reading: the stream id saved with the cache this replica restored, else the
   * stream's start; and the batches applied by then (`applied`, absent where an earlier version saved).
   */
  resumeFrom(point: Partial<ResumePoint>): void {
    if (!point.cursor || !STREAM_ID.test(point.cursor)) return;
    // Moving the cursor once reading has begun would skip or repeat entries.
    if (this.reading) throw new Error('ingest relay: resumeFrom after startReading');
    this.cursor = point.cursor;
    this.mirror?.membership.restore(point.members);
    if (point.applied === undefined) return;
    try {
      this.appended = AppendedBatches.from(JSON.parse(point.applied));
    } catch (err) {
      this.options.logger.warn(
        { err: (err as Error).message },
        'ingest relay: the batches saved as applied are not readable; a copy of one may be applied again',
      );
    }
  }

  /**
   * Saved beside the cache, read in the turn its snapshot is taken: the stream id of the last entry
   * applied (a restart resumes exactly there), the batches applied by then (a copy of one of them
   * that lands after that id is still skipped after the restart) and, dividing the apply, the
   * members as of that entry.
   */
  resumePoint(): ResumePoint {
    // Held messages are past the cursor's entries: applied first, the cache taken next holds them.
    this.freshen();
    // The outage entry being gathered is noted as applied: what is taken from now on goes in another.
    this.outageBatch.size = MAX_ENTRY_MESSAGES;
    const members = this.mirror?.membership.toJSON();
    return { cursor: this.cursor, applied: JSON.stringify(this.appended), ...(members ? { members } : {}) };
  }

  /**
   * True when a replica resuming from `cursor` would miss nothing: the stream trimmed no entry
   * after it, and the first one after it (if any) is younger than REPLAYABLE_SHARE of the
   * retention (a replay from further back could be overtaken by the trimming).
   */
  async replayable(cursor: string): Promise<boolean> {
    if (!STREAM_ID.test(cursor)) return false;
    const client = this.options.redis.client;
    const [[oldest], [next]] = await Promise.all([
      client.xrange(this.streamKey, '-', '+', 'COUNT', 1),
      client.xrange(this.streamKey, `(${cursor}`, '+', 'COUNT', 1),
    ]);
    if (!next) return true;
    const bound = `${Date.now() - Math.floor(REPLAYABLE_SHARE * this.retentionMs)}-0`;
    return oldest !== undefined && !streamIdBefore(cursor, oldest[0]) && !streamIdBefore(next[0], bound);
  }

  /** Called after each read that moved the cursor (records and membership changes too, which change no cache): the saved point is to be saved again. */
  onPointMoved(listener: () => void): void {
    this.pointMoved = listener;
  }

  get connected(): boolean {
    return this.connected_ !== undefined && this.connected_.every((l) => l.subscriber.connected);
  }

  status(): RelayStatus {
    const kept = this.pending.length + this.writingBack.length;
    // Reading the stream again from a saved point (a restart), or READ_COUNT entries behind, shows the past until it reaches the end.
    const stale = !this.options.redis.up || kept > 0 || (this.reading !== undefined && !this.caughtUp);
    if (stale) this.staleSince ??= Date.now();
    else this.staleSince = undefined;
    return {
      backend: 'redis',
      group: this.group,
      stale,
      stale_since: this.staleSince === undefined ? null : new Date(this.staleSince).toISOString(),
      redis_connected: this.options.redis.up,
      mqtt_connected: this.connected,
      pending: kept,
      pending_dropped: this.pendingDropped,
      cursor: this.cursor,
      read_lag_ms: this.lag?.ms ?? null,
      stream_retention_s: this.retentionMs / 1000,
      relayed: this.relayed,
      applied: this.applied,
      adopted_sessions: (this.connected_ ?? []).reduce((n, l) => n + l.adoption.adopted, 0),
      duplicates_skipped: this.duplicatesSkipped,
      mirror: this.mirror?.status() ?? null,
      records_lost: this.records.lost,
    };
  }

  /** A local handler of `filter` (device topics): fed from the stream, whichever replica took the message. */
  async subscribe(filter: string, handler: MessageHandler): Promise<() => Promise<void>> {
    const entry = { filter, handler, qos: 1 as const };
    this.handlers.add(entry);
    const lanes = await this.lanes();
    if (!this.subscribed.has(filter)) {
      this.subscribed.add(filter);
      for (const lane of lanes) await lane.subscriber.subscribe({ filter: `$share/${this.group}/${filter}`, id: SHARED_SUB_ID });
      if (RETAINED_FILTERS.has(filter)) {
        // Only the retained messages sent at subscribe are taken from this one; its live copies are the shared group's.
        await lanes[0].subscriber.subscribe({ filter, id: RETAINED_SUB_ID, rh: 0 });
      }
    }
    return () => {
      this.handlers.remove(entry);
      return Promise.resolve();
    };
  }

  /**
   * Begins applying the stream (once), from the point `resumeFrom` set: after the handlers are
   * subscribed and the cache they fill is restored (the hub calls it once its plugins have started).
   */
  startReading(): void {
    if (this.closed || this.reading) return;
    this.reading = this.readLoop();
    this.lag = new StreamLag(this.options.redis, this.streamKey, () => this.cursor);
  }

  async close(): Promise<void> {
    this.leaving = true;
    this.mirror?.close();
    this.lag?.close();
    // A start under way ends first (the connect's timeout bounds it): its lanes close as the others.
    await this.connecting?.catch(() => undefined);
    const lanes = this.connected_ ?? [];
    // No other replica's session is taken over from now on (one being drained keeps what it had
    // not acknowledged); the heartbeat stays until the lanes are closed.
    await Promise.all(lanes.map((l) => l.adoption.close(false)));
    // The sessions, their subscriptions ended: the broker routes no more messages to them (else
    // half the fleet's would wait in them until another replica took them over, and come late).
    // What was taken is written to the stream and acknowledged with the close (else the replica
    // that takes the session over would write it again: a copy, which the cache counts again once
    // a newer message of its device came); what arrives from now on stays unacknowledged in them
    // for that replica, which may take them over at once: the heartbeats go next.
    for (const [i, lane] of lanes.entries()) {
      for (const filter of this.subscribed) {
        lane.subscriber.unsubscribe(`$share/${this.group}/${filter}`);
        if (i === 0 && RETAINED_FILTERS.has(filter)) lane.subscriber.unsubscribe(filter);
      }
      if (i === 0) lane.subscriber.unsubscribe(this.willTopic);
    }
    this.left = new Promise<void>(() => undefined);
    await this.waitWhile(() => this.commit.waiting > 0 || this.commit.writing > 0);
    await Promise.all(lanes.map((l) => l.subscriber.close()));
    await Promise.all(lanes.map((l) => l.adoption.close(true)));
    await this.leave();
    this.closed = true;
    this.reader?.disconnect();
    await this.reading?.catch(() => undefined);
    // Taken during an outage and acknowledged to the broker: in this process only, and now gone.
    if (this.pending.length > 0) {
      this.options.logger.error({ lost: this.pending.length }, 'ingest relay stopped with messages taken during a Redis outage not yet in the shared stream');
    }
  }

  /**
   * Dividing the apply, a stopping replica writes its leave once it takes no more messages, and
   * reads on up to it: what came before it of the devices it owned is applied (folded) here, what
   * comes after by their new owners. Not when it never read (a failed start) or Redis is down (the
   * others write its leave when its heartbeat is gone).
   */
  private async leave(): Promise<void> {
    if (!this.mirror || !this.joined || !this.options.redis.up) return;
    try {
      const at = await this.xadd(membershipFields({ leave: this.memberId }));
      if (this.reading && at) await this.waitWhile(() => streamIdBefore(this.cursor, at));
    } catch {
      // Redis went away: the others write the leave once its heartbeat is gone.
    }
  }

  /** The live replicas' heartbeats read: the changes that make them the members, written by this replica (any may), each while the heartbeat still says so. */
  private reconcile(live: string[]): void {
    if (!this.mirror || this.leaving || !this.caughtUp) return;
    const { redis } = this.options;
    for (const change of this.mirror.membership.reconcile(live.filter((id) => id.endsWith('-0')))) {
      const [kind, member] = 'join' in change ? ['join', change.join] : ['leave', change.leave];
      const keys = [this.streamKey, heartbeatKey(redis, member)];
      void redis.client.eval(WRITE_CHANGE_IF_HEARTBEAT, 2, ...keys, kind, this.minId(), ...membershipFields(change)).catch(() => undefined);
    }
  }

  /**
   * Dividing the apply, the leave of a member whose first lane's will this replica acted on (it took
   * the session over): written as soon as its heartbeat has missed a beat by a second (1 to 2 s
   * after a crash), not two heartbeat rounds after the heartbeat expired (about 6 s, during which
   * its devices were folded by nobody). A replica whose connection only dropped keeps beating, and
   * stays a member (given up after a heartbeat's time to live). As reconcile, only from an
   * up-to-date view.
   */
  private async leaveOnWill(will: LaneWill): Promise<void> {
    const { redis } = this.options;
    const keys = [this.streamKey, heartbeatKey(redis, will.lane)];
    for (let waited = 0; waited <= HEARTBEAT_TTL_MS; waited += MISSED_BEATS_POLL_MS) {
      if (!this.mirror || this.leaving || !this.mirror.membership.members.includes(will.lane)) return;
      if (this.caughtUp) {
        const fields = membershipFields({ leave: will.lane });
        const answer = await redis.client.eval(WRITE_LEAVE_ONCE_BEATS_MISSED, 2, ...keys, will.replica, MISSED_BEATS_TTL_MS, this.minId(), ...fields);
        if (answer !== 'wait') return;
      }
      await sleep(MISSED_BEATS_POLL_MS);
    }
  }

  /** A stopping replica's wait: while `pending()` holds, LEAVE_READ_MS at most, and not once Redis is down. */
  private async waitWhile(pending: () => boolean): Promise<void> {
    const until = Date.now() + LEAVE_READ_MS;
    while (pending() && Date.now() < until && this.options.redis.up) await sleep(5);
  }

  /** Appends an entry, trimming what is past the retention. */
  private xadd(fields: (string | Buffer)[]): Promise<string | null> {
    return this.options.redis.client.xadd(this.streamKey, 'MINID', '~', this.minId(), '*', ...fields);
  }

  private get retentionMs(): number {
    return this.options.retentionMs ?? DEFAULT_STREAM_RETENTION_MS;
  }

  /**
   * The broker connections of this replica, each a member of the shared group with a session of
   * its own (`<client id>-<n>`). MQTT.js takes one message at a time per connection and the
   * acknowledgement waits for the stream, so one connection is bound by the Redis round trip:
   * several take messages side by side.
   */
  private lanes(): Promise<Lane[]> {
    this.connecting ??= (async () => {
      // Dividing the apply, its join goes before the first message it takes, after a heartbeat (the
      // others write no leave for it while it connects). Redis down: the others write it later.
      if (this.mirror) {
        await writeHeartbeat(this.options.redis, this.memberId, this.replicaId, FIRST_HEARTBEAT_TTL_MS)
          .then(() => this.xadd(membershipFields({ join: this.memberId })))
          .then(() => (this.joined = true))
          .catch(() => undefined);
      }
      const count = Math.max(1, this.options.connections ?? DEFAULT_INGEST_CONNECTIONS);
      const settled = await Promise.allSettled(Array.from({ length: count }, (_, i) => this.lane(laneClientId(this.options.clientId, i), i === 0)));
      const lanes = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) {
        // The lanes that did connect are closed too: a failed start leaves no client or heartbeat running.
        await Promise.all(lanes.map(async (l) => Promise.all([l.subscriber.close(), l.adoption.close(false)])));
        this.connecting = undefined;
        throw failed.reason;
      }
      this.connected_ = lanes;
      return lanes;
    })();
    return this.connecting;
  }

  /** What a lane's session subscribes: the group's shared filters on each, the retained ones and the wills on the first. */
  private sessionFilters(): string[] {
    const filters = [...this.subscribed];
    return [...filters.map((f) => `$share/${this.group}/${f}`), ...filters.filter((f) => RETAINED_FILTERS.has(f)), this.willTopic];
  }

  /**
   * `first`: the lane whose heartbeat round tells which replicas are alive (the mirror's members),
   * and which hears the other replicas' lane wills (a lane that died: taken over at once).
   */
  private async lane(clientId: string, first: boolean): Promise<Lane> {
    const o = this.options;
    const adoption = new SessionAdoption({
      redis: o.redis,
      clientId,
      replicaId: this.replicaId,
      mqttUrl: o.mqttUrl,
      receiveMaximum: RECEIVE_MAXIMUM,
      ...(o.ca ? { ca: o.ca } : {}),
      logger: o.logger,
      take: (packet) => this.take(packet),
      sessionFilters: () => this.sessionFilters(),
      ...(first && this.mirror ? { onLive: (ids: string[]) => this.reconcile(ids) } : {}),
    });
    const onWill = (packet: IPublishPacket): Promise<void> => {
      const will = laneWill(packet.payload);
      // Not its own lanes' (a restarted replica's session holds the wills its lanes left when it died).
      if (!will || will.lane.slice(0, will.lane.lastIndexOf('-')) === o.clientId) return TAKEN;
      void adoption
        .onWill(will)
        .then((took) => (took ? this.leaveOnWill(will) : undefined))
        .catch(() => undefined); // Redis down: the heartbeat rounds decide later
      return TAKEN;
    };
    // A message is acknowledged once it is in the stream (or kept pending); up to RECEIVE_MAXIMUM wait at once.
    const subscriber = new SharedSubscriber({
      will: () => ({
        topic: this.willTopic,
        payload: JSON.stringify({ lane: clientId, replica: this.replicaId, connection: randomBytes(6).toString('hex') } satisfies LaneWill),
      }),
      url: o.mqttUrl,
      clientId,
      sessionExpirySec: o.sessionExpirySec ?? 3600,
      receiveMaximum: RECEIVE_MAXIMUM,
      logger: o.logger,
      ...(o.ca ? { ca: o.ca } : {}),
      ...(o.username !== undefined ? { username: o.username } : {}),
      ...(o.password !== undefined ? { password: o.password } : {}),
      onMessage: (packet) => (packet.topic === this.willTopic ? onWill(packet) : this.take(packet)),
    });
    await subscriber.start().catch((err: Error) => {
      throw new Error(`the ingest relay could not connect to the broker: ${err.message}`);
    });
    adoption.start();
    if (first) {
      // A broker whose ACL refuses it: a dead replica's session is taken over when its heartbeat expires, as before.
      await subscriber.subscribe({ filter: this.willTopic, id: WILL_SUB_ID }).catch((err: Error) => {
        o.logger.warn(
          { err: err.message, topic: this.willTopic },
          "ingest relay: the replicas' wills are not heard; a dead replica's session is taken over when its heartbeat expires",
        );
      });
    }
    return { subscriber, adoption };
  }

  /**
   * Resolves when the message is in the stream, or applied here and kept for it while Redis is
   * away (a stream write that fails keeps its whole batch so). A handler that fails on it does not
   * make it fail: it is acknowledged all the same (dispatch logs the handler's error).
   */
  private take(packet: IPublishPacket): Promise<void> {
    // A will that waited in a session taken over (or in this replica's own, from before a restart): stale, and no device's.
    if (packet.topic === this.willTopic) return TAKEN;
    const fromRetained = !subscribedBy(packet, SHARED_SUB_ID) && subscribedBy(packet, RETAINED_SUB_ID);
    // The non-shared subscription's live copies are also delivered to one replica of the group.
    if (fromRetained && !packet.retain) return TAKEN;
    if (this.left) return this.left;
    // A view of the socket's read: the batch write copies it into its entry within milliseconds.
    const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
    const m: RelayedMessage = { topic: packet.topic, payload, retain: packet.retain, at: Date.now() };
    // Behind what is kept, in order, until it is all written back.
    if (this.options.redis.up && this.pending.length === 0 && this.writingBack.length === 0) return this.commit.add(m);
    if (this.outageBatch.size >= MAX_ENTRY_MESSAGES) {
      this.outageBatch = { n: ++this.batches, size: 0 };
      // Applied here from now on and written back later: a replica restarted from a cache saved
      // meanwhile (which holds them) knows the entry as applied, though it lands after the saved point.
      this.appended.firstTime(this.replicaId, this.outageBatch.n);
    }
    this.outageBatch.size++;
    this.keepPending(m, this.outageBatch.n);
    return TAKEN;
  }

  /**
   * Writes a batch to the stream; if Redis went away meanwhile, its messages are applied here and
   * kept, in order, to be written again under the same number. Unless the entry was read back
   * meanwhile: only its reply was lost, and it is in the stream.
   */
  private async commitOrKeep(batch: RelayedMessage[]): Promise<void> {
    const n = ++this.batches;
    try {
      await this.append(batch, n, false);
    } catch {
      if (!this.appended.firstTime(this.replicaId, n)) return;
      this.outageBatch.size = MAX_ENTRY_MESSAGES; // what is taken next goes in an entry of its own
      for (const m of batch) this.keepPending(m, n);
    }
  }

  private keepPending(taken: RelayedMessage, batch: number): void {
    // Kept for the outage's length: a copy, so that the whole read it came in is not held with it.
    const m = { ...taken, payload: Buffer.from(taken.payload), batch };
    this.dispatch(m.topic, m.payload, m.retain, m.at);
    if (this.pending.length >= (this.options.maxPending ?? DEFAULT_MAX_PENDING)) {
      const at = this.pending.shift()?.at ?? m.at;
      this.pendingDropped++;
      this.droppedNow ??= { count: 0, firstAt: at, lastAt: at };
      this.droppedNow.count++;
      this.droppedNow.lastAt = at;
    }
    this.pending.push(m);
  }

  /** Stream entry `n` of this replica, holding `batch` (packed); `appliedHere`: applied here already (taken while Redis was down). */
  private async append(batch: RelayedMessage[], n: number, appliedHere: boolean): Promise<void> {
    await this.xadd(['b', packMessages(batch), 'o', this.replicaId, 'n', String(n), 'l', appliedHere ? '1' : '0']);
    this.relayed += batch.length;
  }

  /** The oldest stream id an append keeps (approximately: whole nodes go). */
  private minId(): string {
    return String(Date.now() - this.retentionMs);
  }

  /** Redis is back: what was taken meanwhile goes to the stream, in order, marked as applied here already. */
  private flushPending(): Promise<void> {
    this.flushing ??= (async () => {
      try {
        while (this.pending.length > 0 && this.options.redis.up && !this.closed) {
          // One entry per number: a batch whose write failed goes again as it was.
          const n = this.pending[0].batch;
          // What is taken from now on goes in a new entry: this one's number is being written.
          if (n === this.outageBatch.n) this.outageBatch.size = MAX_ENTRY_MESSAGES;
          let size = 1;
          while (size < this.pending.length && this.pending[size].batch === n) size++;
          this.writingBack = this.pending.splice(0, size);
          try {
            await this.append(this.writingBack, n, true);
          } catch (err) {
            this.pending.unshift(...this.writingBack);
            throw err;
          } finally {
            this.writingBack = [];
          }
        }
        if (this.pending.length === 0 && this.droppedNow) {
          const { count, firstAt, lastAt } = this.droppedNow;
          this.droppedNow = undefined;
          this.options.logger.warn(
            {
              dropped: count,
              taken_from: new Date(firstAt).toISOString(),
              taken_to: new Date(lastAt).toISOString(),
              bound: this.options.maxPending ?? DEFAULT_MAX_PENDING,
            },
            'ingest relay: messages taken during the Redis outage were dropped (the oldest, over the bound of what a replica keeps); applied here only, the other replicas never saw them',
          );
        }
      } catch (err) {
        this.options.logger.warn(
          { err: (err as Error).message, left: this.pending.length },
          'ingest relay: writing back what was taken during the outage stopped; retried when redis returns',
        );
      } finally {
        this.flushing = undefined;
      }
    })();
    return this.flushing;
  }

  private async readLoop(): Promise<void> {
    this.reader = this.options.redis.duplicate();
    this.reader.on('error', () => undefined); // the main connection logs the outage
    while (!this.closed) {
      try {
        if (this.reader.status !== 'ready') {
          await sleep(100);
          continue;
        }
        const res = await this.reader.xreadBuffer('COUNT', READ_COUNT, 'BLOCK', 1000, 'STREAMS', this.streamKey, this.cursor);
        if (!res) {
          this.caughtUp = true;
          continue;
        }
        let read = 0;
        for (const [, entries] of res) {
          for (const [id, fields] of entries) {
            this.apply(fields);
            this.cursor = id.toString();
          }
          read += entries.length;
        }
        // A full read: at least READ_COUNT entries behind (a restart's replay, or a replica that cannot keep up).
        this.caughtUp = read < READ_COUNT;
        if (read > 0) this.pointMoved?.();
        if (this.pending.length > 0 && this.options.redis.up) void this.flushPending();
        // A trickle is read in batches: one round trip per few milliseconds rather than one per message.
        if (read < READ_BATCH_WAIT_BELOW) await sleep(READ_BATCH_WAIT_MS);
      } catch {
        if (!this.closed) await sleep(200);
      }
    }
  }

  private apply(fields: Buffer[]): void {
    let packed: Buffer | undefined;
    let origin = '';
    let batch: number | undefined;
    let appliedHere = false;
    let channel: string | undefined;
    let writer: string | undefined;
    let membership: string | undefined;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const name = fields[i].toString();
      const value = fields[i + 1];
      if (name === 'b' || name === RECORD_VALUE_FIELD) packed = value;
      else if (name === 'o') origin = value.toString();
      else if (name === 'n') batch = Number(value.toString());
      else if (name === 'l') appliedHere = value.toString() === '1';
      else if (name === RECORD_CHANNEL_FIELD) channel = value.toString();
      else if (name === RECORD_WRITER_FIELD) writer = value.toString();
      else if (name === MEMBERSHIP_FIELD) membership = value.toString();
    }
    // Every replica changes the owners here, its own changes too; a copy changes nothing.
    if (membership !== undefined) {
      if (this.mirror?.membership.apply(membership)) {
        this.options.logger.info(
          { change: membership, members: this.mirror.membership.members.length },
          'ingest relay: the replicas dividing the apply changed',
        );
      }
      return;
    }
    // What this replica applied while Redis was down, and the records it wrote (in this run or before a restart), are not applied again.
    if (!packed || (appliedHere && origin === this.replicaId) || (channel !== undefined && writer === this.options.clientId)) return;
    // A number that is not one (a foreign writer) is not remembered: applied as entries without one are.
    if (batch !== undefined && Number.isSafeInteger(batch) && !this.appended.firstTime(origin, batch)) {
      this.duplicatesSkipped++;
      return;
    }
    if (channel !== undefined) return this.records.deliver(channel, packed);
    let messages: RelayedMessage[];
    try {
      messages = unpackMessages(packed);
    } catch (err) {
      this.options.logger.error({ err: (err as Error).message }, 'ingest relay: a stream entry that is not a packed batch was skipped');
      return;
    }
    for (const m of messages) this.dispatch(m.topic, m.payload, m.retain, m.at);
  }

  private dispatch(topic: string, payload: Buffer, retain: boolean, receivedAt: number): void {
    const held = this.mirror?.hold(topic, payload, retain, receivedAt) ?? 'own';
    if (held === 'held') return;
    this.deliver(topic, payload, { retain, receivedAt, foreign: held === 'foreign' });
  }

  /** `foreign`: a dets or telemetry of a device another replica owns (DeviceMirror.hold), which derives from it what is derived from each. */
  private deliver(
    topic: string,
    payload: Buffer,
    meta: { retain: boolean; receivedAt: number; foreign: boolean; collapsed?: number; collapsedFirst?: Buffer | undefined },
  ): void {
    this.applied++;
    this.delivering = true;
    for (const handler of this.handlers.handlersFor(topic)) {
      try {
        handler(topic, payload, meta);
      } catch (err) {
        this.options.logger.error({ err, topic }, 'ingest relay: a handler failed');
      }
    }
    this.delivering = false;
  }
}

/** A membership change's entry (no number: applying one twice changes nothing the second time). */
function membershipFields(change: MembershipChange): string[] {
  return [MEMBERSHIP_FIELD, JSON.stringify(change)];
}

function laneClientId(clientId: string, lane: number): string {
  return `${clientId}-${lane}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whether the message came through the subscription `id` (one of its MQTT 5 subscription identifiers). */
function subscribedBy(packet: IPublishPacket, id: number): boolean {
  const ids = packet.properties?.subscriptionIdentifier;
  return Array.isArray(ids) ? ids.includes(id) : ids === id;
}

/** A lane will's payload, or undefined when it is not one (the topic is the hub users' own; checked all the same). */
function laneWill(payload: Buffer | string): LaneWill | undefined {
  try {
    const v = JSON.parse(payload.toString()) as Partial<LaneWill>;
    return typeof v.lane === 'string' && typeof v.replica === 'string' && typeof v.connection === 'string'
      ? { lane: v.lane, replica: v.replica, connection: v.connection }
      : undefined;
  } catch {
    return undefined;
  }
}
