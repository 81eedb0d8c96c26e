import type { IngestEvents } from './ingest-events.js';

/** The ingest's totals for /fleet/mqtt/config, kept by listening to the stages. */
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

  constructor(events: IngestEvents) {
    events.on('received', (_key, now) => {
      this.messages++;
      this.lastMessageAt = now;
    });
    events.on('stored', () => this.valid++);
    events.on('refused', (r) => {
      this.invalid++;
      this.invalidByTopic[r.key] = (this.invalidByTopic[r.key] ?? 0) + 1;
      this.invalidByReason[r.reason] = (this.invalidByReason[r.reason] ?? 0) + 1;
    });
    events.on('unknownDevice', () => this.refusedUnknown++);
    events.on('deviceRefused', () => this.refusedDevices++);
  }
}
