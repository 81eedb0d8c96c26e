import type { BusSuffix } from 'lookout/core/contracts';
import type { DeviceCache } from './device-cache.js';
import { cut } from './ingest-text.js';
import type { InvalidReason } from './service.js';

/** What a refusal keeps of its issue, and what the ring's message line holds. */
export const MAX_ISSUE_CHARS = 300;

/**
 * A message a stage refused, and why. A class, so that a stage can return either it or what it made
 * of the message (a JSON value, a checked message: never an instance of it) without a wrapper object
 * on the path every valid message takes.
 */
export class Refusal {
  /** The issue, cut: it may quote the message (zod names a record key in its path), and a refused message keeps no more of itself than its preview. */
  readonly issue: string;

  constructor(
    readonly topic: string,
    readonly deviceId: string | undefined,
    readonly suffix: string,
    /** The contract key, or "unknown". */
    readonly key: string,
    readonly reason: InvalidReason,
    fullIssue: string,
  ) {
    this.issue = cut(fullIssue, MAX_ISSUE_CHARS);
  }
}

/**
 * A valid message stored in its device's entry, as `applied` listeners get it: positional, so that the
 * path every valid message takes allocates nothing for it.
 */
export type AppliedListener = (
  device: DeviceCache,
  key: BusSuffix,
  suffix: string,
  topic: string,
  message: Record<string, unknown>,
  /** What the entry held for this suffix before. */
  previous: Record<string, unknown> | undefined,
  retain: boolean,
  now: number,
) => void;

/** The outcomes of the ingest stages, each with its listeners' signature. */
export interface IngestEventMap {
  /** A message arrived (not one replayed after it waited): its contract key or "unknown". */
  received: (key: string, now: number) => void;
  /** A stage refused it: size, JSON, depth, contract. */
  refused: (refusal: Refusal, payload: Buffer, now: number) => void;
  /** Valid, but of a device nobody announced: dropped. */
  unknownDevice: (topic: string, deviceId: string, key: string, payload: Buffer, now: number) => void;
  /** A new device had no place: the cache is full. */
  deviceRefused: (deviceId: string) => void;
  /** A device entry no rule admits was forgotten to make room for one a rule admits. */
  evicted: (evicted: DeviceCache, forDevice: string) => void;
  /** Stored and newer than what the entry held (or an event): what the cache now says changed. */
  applied: AppliedListener;
}

type Lists = { [K in keyof IngestEventMap]: IngestEventMap[K][] };

/**
 * The ingest's typed callback lists: what the stages made of each message is told here, and the side
 * effects (refusal counts, metrics, the debug ring, alerts) listen. Listeners run in the order they were added, synchronously;
 * one emitter per event, with its own arguments, so that the path every message takes spreads and
 * allocates nothing.
 */
export class IngestEvents {
  private readonly lists: Lists = { received: [], refused: [], unknownDevice: [], deviceRefused: [], evicted: [], applied: [] };

  on<K extends keyof IngestEventMap>(event: K, listener: IngestEventMap[K]): () => void {
    const list = this.lists[event];
    list.push(listener);
    return () => {
      const i = list.indexOf(listener);
      if (i >= 0) list.splice(i, 1);
    };
  }

  received(key: string, now: number): void {
    const list = this.lists.received;
    for (let i = 0; i < list.length; i++) list[i](key, now);
  }

  refused(refusal: Refusal, payload: Buffer, now: number): void {
    const list = this.lists.refused;
    for (let i = 0; i < list.length; i++) list[i](refusal, payload, now);
  }

  unknownDevice(topic: string, deviceId: string, key: string, payload: Buffer, now: number): void {
    const list = this.lists.unknownDevice;
    for (let i = 0; i < list.length; i++) list[i](topic, deviceId, key, payload, now);
  }

  deviceRefused(deviceId: string): void {
    const list = this.lists.deviceRefused;
    for (let i = 0; i < list.length; i++) list[i](deviceId);
  }

  evicted(evicted: DeviceCache, forDevice: string): void {
    const list = this.lists.evicted;
    for (let i = 0; i < list.length; i++) list[i](evicted, forDevice);
  }

  applied(
    device: DeviceCache,
    key: BusSuffix,
    suffix: string,
    topic: string,
    message: Record<string, unknown>,
    previous: Record<string, unknown> | undefined,
    retain: boolean,
    now: number,
  ): void {
    const list = this.lists.applied;
    for (let i = 0; i < list.length; i++) list[i](device, key, suffix, topic, message, previous, retain, now);
  }
}
