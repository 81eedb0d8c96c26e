import type { CanFrame } from './candump-line.js';
import { decodeJ1939Frame, type DecodedParameter } from './j1939-decode.js';
import { decodeJ1939Id } from './j1939-id.js';
import { groupOf } from './j1939-parameters.js';

/** One entry of the published `frames`: the latest frame of a group from one source address. */
export interface PublishedFrame {
  pgn: number;
  source_address: number;
  priority: number;
  name: string;
  /** Parameter name → physical value, null when the sender said not available or error. */
  value: Record<string, number | null>;
  parameters: DecodedParameter[];
  /** When the latest of these frames arrived (the kernel's timestamp). */
  received_at: string;
  /** Frames of this group and source since the previous message (0: the value is held from before). */
  count: number;
}

export interface CanCounters {
  frames: number;
  decoded: number;
  /** 29-bit frames of groups outside the parameter table. */
  unknown: number;
  /** 11-bit frames: not J1939. */
  standard: number;
  error_frames: number;
  remote: number;
  /** Groups not kept because `maxGroups` were held already. */
  dropped: number;
}

/**
 * Keeps the latest decoded frame per (PGN, source address), so a bus at 1000 frames/s becomes one
 * message per interval with one entry per group. Every message carries the whole vehicle state
 * (odometer and engine hours come seldom, and the hub keeps only the latest message), less the
 * groups not heard for `staleMs`. Bounded to `maxGroups` entries; unknown PGNs are counted, with
 * at most `maxUnknown` of their numbers listed.
 */
export class CanAggregate {
  /** The latest raw frame per group and source: decoded only when a message is made, not per frame. */
  private latest = new Map<number, { frame: CanFrame; count: number }>();
  private unknownPgns = new Set<number>();
  readonly counters: CanCounters = { frames: 0, decoded: 0, unknown: 0, standard: 0, error_frames: 0, remote: 0, dropped: 0 };
  lastFrameAt: number | null = null;
  private fresh = false;

  constructor(
    private readonly maxGroups = 64,
    private readonly maxUnknown = 32,
  ) {}

  add(frame: CanFrame): void {
    this.counters.frames++;
    this.lastFrameAt = frame.time * 1000;
    this.fresh = true;
    if (frame.error) return void this.counters.error_frames++;
    if (frame.remote) return void this.counters.remote++;
    if (!frame.extended) return void this.counters.standard++;
    const head = decodeJ1939Id(frame.id);
    if (!groupOf(head.pgn)) {
      this.counters.unknown++;
      if (this.unknownPgns.size < this.maxUnknown) this.unknownPgns.add(head.pgn);
      return;
    }
    const key = head.pgn * 256 + head.source_address;
    const prev = this.latest.get(key);
    if (!prev && this.latest.size >= this.maxGroups) return void this.counters.dropped++;
    this.counters.decoded++;
    this.latest.set(key, { frame, count: (prev?.count ?? 0) + 1 });
  }

  /** Whether a frame arrived since the last `take`. */
  get pending(): boolean {
    return this.fresh;
  }

  /**
   * The groups heard within `staleMs` of `nowMs`, ordered by PGN then source, with their counts
   * since the last call; older groups are forgotten. The counting window starts again.
   */
  take(nowMs: number, staleMs: number): { frames: PublishedFrame[]; unknown_pgns: number[] } {
    const frames: PublishedFrame[] = [];
    for (const [key, held] of this.latest) {
      if (nowMs - held.frame.time * 1000 > staleMs) {
        this.latest.delete(key);
        continue;
      }
      const d = decodeJ1939Frame(held.frame.id, held.frame.data);
      const value: Record<string, number | null> = {};
      for (const p of d.parameters) if (p.state !== 'missing') value[p.name] = p.value;
      frames.push({
        pgn: d.pgn,
        source_address: d.source_address,
        priority: d.priority,
        name: d.name!,
        value,
        parameters: d.parameters,
        received_at: new Date(held.frame.time * 1000).toISOString(),
        count: held.count,
      });
      held.count = 0;
    }
    frames.sort((a, b) => a.pgn - b.pgn || a.source_address - b.source_address);
    const unknown_pgns = [...this.unknownPgns].sort((a, b) => a - b);
    this.unknownPgns.clear();
    this.fresh = false;
    return { frames, unknown_pgns };
  }
}
