import type { HubMetricsPort } from 'lookout/hub';
import type { IngestEvents } from './ingest-events.js';

/** The hub's Prometheus figures of ingest: messages per contract, refusals per contract and reason. */
export function meterIngest(events: IngestEvents, metrics: HubMetricsPort): void {
  events.on('received', (key, now) => metrics.ingested(key, now));
  events.on('refused', (r) => metrics.invalid(r.key, r.reason));
  events.on('unknownDevice', (_topic, _deviceId, key) => metrics.invalid(key, 'unknown_device'));
}
