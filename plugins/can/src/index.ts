import { z } from 'zod';
import { definePlugin, toLookoutError } from 'lookout/core';
import { busTopic } from 'lookout/core/contracts';
import { CanAggregate } from './can-aggregate.js';
import { candumpSource, recordedSource, type FrameSource } from './frame-source.js';
import type { CanMessage, CanState } from './service.js';

export const CanConfig = z
  .object({
    CAN_INTERFACE: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,15}$/, 'a network interface name')
      .default('can0')
      .describe('the SocketCAN interface candump reads'),
    CAN_SOURCE: z.enum(['candump', 'file']).default('candump').describe('candump (the kernel, through can-utils) or file (a recorded candump -L log)'),
    CAN_CANDUMP: z.string().min(1).default('candump').describe('the candump program'),
    CAN_RECORDING: z.string().min(1).optional().describe('the candump -L log CAN_SOURCE=file plays'),
    CAN_PUBLISH_INTERVAL_MS: z.coerce.number().int().min(100).default(1000).describe('one telemetry/can message per interval at most'),
    CAN_STALE_MS: z.coerce.number().int().min(100).default(30_000).describe('a group not heard for this long leaves the message'),
    CAN_IDLE_MS: z.coerce.number().int().min(100).default(5000).describe('no frame for this long: the bus is said idle'),
    CAN_RETRY_MS: z.coerce.number().int().min(100).default(30_000).describe('candump is started again this long after it ended'),
    CAN_MAX_GROUPS: z.coerce
      .number()
      .int()
      .min(1)
      .max(256)
      .default(64)
      .describe('at most this many (PGN, source) entries in a message (256 keep it well under the hub’s 256 KiB message limit)'),
  })
  .superRefine((c, issues) => {
    if (c.CAN_SOURCE === 'file' && !c.CAN_RECORDING)
      issues.addIssue({ code: 'custom', path: ['CAN_RECORDING'], message: 'CAN_SOURCE=file needs CAN_RECORDING, the candump -L log to play' });
  });

/**
 * Vehicle telemetry from the CAN bus (spec 01, `telemetry/can`): J1939 frames read from SocketCAN
 * through can-utils' candump (or a recorded candump log), decoded here (priority, PGN, source
 * address; engine speed, road speed, fuel level, temperatures, odometer, engine hours, …) and
 * published as the latest value of each group at most once per interval. A device without a CAN
 * bus says why once, in its message and its log, and stays healthy.
 */
export default definePlugin({
  name: 'can',
  version: '1.0.0',
  core: '^1',
  description: 'J1939 vehicle telemetry from SocketCAN (candump) on telemetry/can',
  layer: 'layer0',
  config: CanConfig,
  topics: [busTopic('telemetry/can')],
  async start(ctx) {
    const { config, clock, log } = ctx;
    const aggregate = new CanAggregate(config.CAN_MAX_GROUPS);
    let source: FrameSource | null = null;
    let down: string | null = null;
    let retryTimer: ReturnType<typeof clock.setTimeout> | null = null;
    let said: { state: CanState; reason: string | null } | null = null;

    const open = () => {
      // The reason it was down stays until candump proves itself (a frame, or CAN_IDLE_MS alive):
      // a retry that fails the same way again says nothing new.
      const opened = clock.setTimeout(() => {
        if (source) down = null;
      }, config.CAN_IDLE_MS);
      const events = {
        frame: (f: Parameters<CanAggregate['add']>[0]) => {
          down = null;
          aggregate.add(f);
        },
        ended: (reason: string) => {
          clock.clear(opened);
          source = null;
          down = reason;
          if (config.CAN_SOURCE === 'candump') retryTimer = clock.setTimeout(open, config.CAN_RETRY_MS);
        },
      };
      source = config.CAN_SOURCE === 'file' ? recordedSource(config.CAN_RECORDING!, events) : candumpSource(config.CAN_CANDUMP, config.CAN_INTERFACE, events);
    };

    const stateNow = (now: number, fresh: boolean): { state: CanState; reason: string | null } => {
      if (fresh) return { state: 'receiving', reason: null };
      if (down) return { state: 'unavailable', reason: down };
      const silentFor = aggregate.lastFrameAt === null ? null : now - aggregate.lastFrameAt;
      if (silentFor !== null && silentFor < config.CAN_IDLE_MS) return { state: 'receiving', reason: null };
      return {
        state: 'idle',
        reason: silentFor === null ? `no frame on ${config.CAN_INTERFACE} yet` : `no frame on ${config.CAN_INTERFACE} for ${Math.round(silentFor / 1000)} s`,
      };
    };

    let busy = false;
    // A (re)connect is owed a message even when a tick is running or nothing changed.
    let owed = false;
    // Ticks publish once the bus has told this connect: its listeners run after the resubscribe, and
    // a tick in between would say the state that the connect's owed message says again.
    let live = false;
    /** Publishes when frames came, or once when the state changed (a silent or missing bus is said once, not every interval). */
    const tick = async (force: boolean) => {
      owed ||= force;
      if (!ctx.bus.connected) live = false;
      if (busy || !live) return;
      const now = clock.now();
      const fresh = aggregate.pending;
      const s = stateNow(now, fresh);
      const changed = said?.state !== s.state || said?.reason !== s.reason;
      // An idle reason's seconds grow every tick: only a change of state is news there.
      const news = fresh || said?.state !== s.state || (s.state === 'unavailable' && changed);
      if (!news && !owed) return;
      owed = false;
      if (s.state !== said?.state) {
        const level = s.state === 'receiving' ? 'info' : 'warn';
        log[level]({ interface: config.CAN_INTERFACE, state: s.state }, s.reason ?? `CAN frames arriving on ${config.CAN_INTERFACE}`);
      }
      said = s;
      const { frames, unknown_pgns } = aggregate.take(now, config.CAN_STALE_MS);
      const message: CanMessage = {
        timestamp: new Date(now).toISOString(),
        interface: config.CAN_INTERFACE,
        source: config.CAN_SOURCE,
        state: s.state,
        reason: s.reason,
        frames,
        unknown_pgns,
        counters: { ...aggregate.counters },
      };
      busy = true;
      try {
        await ctx.bus.publish('telemetry/can', message);
      } catch (err) {
        log.warn({ code: toLookoutError(err).code }, `telemetry/can not published: ${toLookoutError(err).message}`);
      } finally {
        busy = false;
      }
    };

    open();
    ctx.bus.onConnect(() => {
      live = true;
      void tick(true);
    });
    clock.setInterval(() => void tick(false), config.CAN_PUBLISH_INTERVAL_MS);
    log.info({ source: config.CAN_SOURCE, interface: config.CAN_INTERFACE, intervalMs: config.CAN_PUBLISH_INTERVAL_MS }, 'CAN telemetry reading');
    return {
      stop: () => {
        if (retryTimer) clock.clear(retryTimer);
        source?.stop();
        source = null;
      },
    };
  },
});
