import type { IPublishPacket } from 'mqtt-packet';
import { SharedSubscriber } from 'lookout/lib/mqtt';
import type { Logger } from 'lookout/core';
import type { RedisConnection } from './redis-connection.js';

/** How often a replica says it is alive, and after how long without it the others take over its broker session. */
export const HEARTBEAT_EVERY_MS = 1_000;
export const HEARTBEAT_TTL_MS = 4_000;
/** The key a replica's heartbeat is written under (its ingest client id). */
export function heartbeatKey(redis: RedisConnection, clientId: string): string {
  return redis.key('replica', clientId);
}

/** One heartbeat: the replica `clientId` (process `replicaId`) is alive for `ttlMs`, and a member of the replicas. */
export async function writeHeartbeat(redis: RedisConnection, clientId: string, replicaId: string, ttlMs = HEARTBEAT_TTL_MS): Promise<void> {
  await redis.client.set(heartbeatKey(redis, clientId), replicaId, 'PX', ttlMs);
  await redis.client.sadd(redis.key('replicas'), clientId);
}

/** An adopted session is drained once nothing arrived from it for this long. */
const DRAIN_IDLE_MS = 1_000;
/** Wills acted on, remembered so that a connection is taken over once at most. */
const MAX_LOST_REMEMBERED = 1_024;

/** What a replica's ingest lane leaves behind when its connection ends without a DISCONNECT (SharedSubscriber's will). */
export interface LaneWill {
  /** The lane's client id (its broker session). */
  lane: string;
  /** The process it belonged to (`IngestRelay.replicaId`, the value of its heartbeat). */
  replica: string;
  /** New at each connection of the lane: a connection that dropped does not hide a later one that dies. */
  connection: string;
}

export interface SessionAdoptionOptions {
  redis: RedisConnection;
  /** This replica's ingest client id (its broker session). */
  clientId: string;
  /** The process (`IngestRelay.replicaId`): a restarted replica is another process with the same client id. */
  replicaId: string;
  mqttUrl: string;
  /**
   * The replicas' Receive Maximum: the broker hands an adopted session's unacknowledged messages over
   * again all at once, as many as the dead replica had in hand, whatever the new connection asks for.
   */
  receiveMaximum: number;
  /** With mqtts://: the CAs the broker's certificate must chain to (default Node's). */
  ca?: string[];
  logger: Logger;
  /** The relay's path for a message: it is in the stream (or kept pending) before it is acknowledged. */
  take(packet: IPublishPacket): Promise<void>;
  /**
   * The filters a replica's session holds (the group's shared filters, and the first lane's own):
   * ended in a session taken over, so that the broker hands it only what it had queued and it drains.
   */
  sessionFilters(): string[];
  /** After each round: the client ids whose heartbeat is alive, this one's first. */
  onLive?(clientIds: string[]): void;
}

/**
 * Takes over the broker session of a replica that died. A broker such as mosquitto keeps handing a
 * shared subscription's messages to a member whose persistent session outlives its connection
 * (they queue for it, with those it had not acknowledged). Each replica keeps a heartbeat key in
 * Redis; when one's expires, or at once when its lane's will says its connection ended without a
 * DISCONNECT (onWill), another claims it once (SET NX), connects with the dead replica's
 * client id, which gives it the session's queued and unacknowledged messages, takes them through
 * the same path as its own, and ends the session (session expiry 0) so that the broker stops
 * routing to it. A replica that comes back takes its session back (the same client id) or, once
 * it was ended, opens a new one and joins the group again.
 */
export class SessionAdoption {
  private timer: NodeJS.Timeout | undefined;
  private readonly adopting = new Map<string, { client: SharedSubscriber; idle: NodeJS.Timeout }>();
  /** `<lane> <connection>` of the wills acted on. */
  private readonly lost = new Set<string>();
  private closed = false;
  adopted = 0;

  constructor(private readonly options: SessionAdoptionOptions) {}

  start(): void {
    const tick = (): void => {
      void this.beat()
        .then(() => this.watch())
        .catch(() => undefined) // Redis down: nobody adopts until it returns (the heartbeats are written again first)
        .finally(() => {
          if (!this.closed) this.timer = setTimeout(tick, HEARTBEAT_EVERY_MS);
        });
    };
    tick();
  }

  /** A clean stop: the heartbeat goes at once, so a replica that is not coming back is adopted without waiting for the ttl. */
  async close(graceful: boolean): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    // The drain timers too: the close handler skips them once the client is disconnecting, and a live interval keeps the process up.
    for (const { client, idle } of this.adopting.values()) {
      clearInterval(idle);
      void client.close();
    }
    if (graceful && this.options.redis.up) await this.options.redis.client.del(this.heartbeatKey(this.options.clientId)).catch(() => undefined);
  }

  private heartbeatKey(clientId: string): string {
    return heartbeatKey(this.options.redis, clientId);
  }

  private beat(): Promise<void> {
    return writeHeartbeat(this.options.redis, this.options.clientId, this.options.replicaId);
  }

  private async watch(): Promise<void> {
    const { redis } = this.options;
    const live = [this.options.clientId];
    for (const other of await redis.client.smembers(redis.key('replicas'))) {
      if (other === this.options.clientId || this.adopting.has(other)) continue;
      if ((await redis.client.exists(this.heartbeatKey(other))) === 1) {
        live.push(other);
        continue;
      }
      // Stopping: a session taken over now would be acknowledged into a replica that is going away.
      if (this.closed) return;
      const claimed = await redis.client.set(redis.key('adopt', other), this.options.replicaId, 'PX', 60_000, 'NX');
      if (claimed === 'OK' && !this.closed) this.adopt(other);
    }
    this.options.onLive?.(live);
  }

  /**
   * Another replica's lane's will: its connection ended without a DISCONNECT, the broker queues its
   * share of the fleet's messages from now on. Taken over at once, without waiting for its heartbeat
   * to expire (a SIGKILLed replica's messages would wait seconds, or until it restarts), while the
   * heartbeat still names the process the will came from (a restarted one has its session back; one
   * without a heartbeat is the heartbeat round's) and its session was not ended yet. Each connection
   * at most once: a lane whose connection only dropped (its process alive) takes its session back.
   * The caller passes only other replicas' wills (a restarted replica hears its own old ones).
   * True when this replica took the session over (it alone, of those that heard the will).
   */
  async onWill(will: LaneWill): Promise<boolean> {
    const { redis } = this.options;
    const seen = `${will.lane} ${will.connection}`;
    if (this.closed || will.replica === this.options.replicaId || this.adopting.has(will.lane) || this.lost.has(seen)) return false;
    if (this.lost.size >= MAX_LOST_REMEMBERED) this.lost.clear();
    this.lost.add(seen);
    const [member, beat] = await Promise.all([redis.client.sismember(redis.key('replicas'), will.lane), redis.client.get(this.heartbeatKey(will.lane))]);
    if (member !== 1 || beat !== will.replica) return false;
    const claimed = await redis.client.set(redis.key('adopt', will.lane), this.options.replicaId, 'PX', 60_000, 'NX');
    if (claimed !== 'OK' || this.closed) return false;
    this.adopt(will.lane, 'will');
    return true;
  }

  private adopt(deadClientId: string, trigger: 'heartbeat' | 'will' = 'heartbeat'): void {
    const { logger, redis } = this.options;
    const log = logger.child({ adopted: deadClientId, trigger });
    let lastMessageAt = Date.now();
    let taken = 0;
    let ending = false;
    let finished = false;
    const finish = async (ended: boolean): Promise<void> => {
      if (finished) return;
      finished = true;
      clearInterval(idle);
      this.adopting.delete(deadClientId);
      if (ended) {
        // The session is over: no more messages are queued for a replica that is gone.
        await redis.client.srem(redis.key('replicas'), deadClientId).catch(() => undefined);
        this.adopted++;
        log.warn({ taken }, 'took over the broker session of a replica that stopped: its queued and unacknowledged messages are in the shared state');
      }
      await redis.client.del(redis.key('adopt', deadClientId)).catch(() => undefined);
    };
    // The library's subscriber, on the dead replica's client id: no subscription of its own (the session has them), no reconnect.
    const client = new SharedSubscriber({
      url: this.options.mqttUrl,
      clientId: deadClientId,
      sessionExpirySec: 3600,
      receiveMaximum: this.options.receiveMaximum,
      reconnectMs: null,
      connectTimeoutMs: 5_000,
      ...(this.options.ca ? { ca: this.options.ca } : {}),
      logger: log,
      onMessage: (packet) => {
        lastMessageAt = Date.now();
        taken++;
        // A message that failed is acknowledged all the same: the session is being ended, nobody would get it again.
        return this.options.take(packet).catch((err: unknown) => log.error({ err, topic: packet.topic }, 'adopted session: a message failed'));
      },
      onConnect: (sessionPresent) => {
        log.info({ session_present: sessionPresent }, 'adopting the broker session of a replica that stopped');
        // Else the broker keeps routing the group's share to it: under a steady load it would never
        // drain, and stay open as long as this replica (one more after each replica that never returns).
        for (const filter of this.options.sessionFilters()) client.unsubscribe(filter);
      },
      // Taken back by the replica itself (same client id), or the broker went away: the claim lapses and a later round decides again.
      onEnd: () => {
        if (!ending) void finish(false);
      },
    });
    const idle = setInterval(() => {
      if (!client.connected || Date.now() - lastMessageAt < DRAIN_IDLE_MS) return;
      clearInterval(idle);
      ending = true;
      void client.close({ endSession: true }).then(() => finish(true));
    }, 250);
    this.adopting.set(deadClientId, { client, idle });
    client.start().catch((err: Error) => {
      log.warn({ err: err.message }, 'adopting a broker session failed');
      void finish(false);
    });
  }
}
