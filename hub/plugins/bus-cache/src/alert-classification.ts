import type { IngestEvents } from './ingest-events.js';

const ALERT_TYPE = /incident|anomal|alert/i;

/**
 * What a device entry keeps beside the latest per topic: the chunks its data_manifest lists, and the
 * events whose type is an incident, an anomaly or an alert (anomaly_alerts of /fleet/mqtt/latest).
 */
export function classifyAlerts(events: IngestEvents): void {
  events.on('applied', (device, key, suffix, topic, message, _previous, _retain, now) => {
    if (key === 'data_manifest' && Array.isArray(message.chunks)) device.addChunks(message.chunks as Record<string, unknown>[]);
    else if (key === 'events/+') {
      const type = suffix.startsWith('events/') ? suffix.slice('events/'.length) : typeof message.type === 'string' ? message.type : 'event';
      if (ALERT_TYPE.test(type)) device.addAlert({ ...message, type, topic, received_at: new Date(now).toISOString() }); // ours win over the device's fields
    }
  });
}
