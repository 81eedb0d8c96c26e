import type { IngestEvents } from './ingest-events.js';

/**
 * The ingest's totals for /fleet/mqtt/config. Every message and every valid one are counted by the
 * ingest itself (a direct call on the path every message takes); the refusals, by listening.
 */
export class IngestCounters {
  messages = 0;
  valid = 0;
  invalid = 0;
  refusedDevices = 0;
  /** Valid messages of devices that are not known (no hello, no admission rule): dropped. */
  refusedUnknown = 0;
  lastMessageAt: number | null = null;
  readonly invalidByTopic: Record<string, number> = {};
  readonly invalidByReason: Record<string, number> = {};

  /** Messages arrived (not ones replayed after they waited): `count` above one where a replica applied several as their newest. */
  received(now: number, count = 1): void {
    this.messages += count;
    // A replica applies what it held back after newer messages of other devices: the time never goes back.
    if (this.lastMessageAt === null || now > this.lastMessageAt) this.lastMessageAt = now;
  }

  constructor(events: IngestEvents) {
    events.on('refused', (r) => {
      this.invalid++;
      this.invalidByTopic[r.key] = (this.invalidByTopic[r.key] ?? 0) + 1;
      this.invalidByReason[r.reason] = (this.invalidByReason[r.reason] ?? 0) + 1;
    });
    events.on('unknownDevice', () => this.refusedUnknown++);
    events.on('deviceRefused', () => this.refusedDevices++);
  }
}
