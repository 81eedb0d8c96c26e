import type { IngestEvents, StoredMessage } from './ingest-events.js';

const ALERT_TYPE = /incident|anomal|alert/i;

/**
 * What a device entry keeps beside the latest per topic: the chunks its data_manifest lists, and the
 * events whose type is an incident, an anomaly or an alert (anomaly_alerts of /fleet/mqtt/latest).
 */
export function classifyAlerts(events: IngestEvents): void {
  events.on('applied', (m: StoredMessage) => {
    const { key, message, device } = m;
    if (key === 'data_manifest' && Array.isArray(message.chunks)) device.addChunks(message.chunks as Record<string, unknown>[]);
    else if (key === 'events/+') {
      const type = m.suffix.startsWith('events/') ? m.suffix.slice('events/'.length) : typeof message.type === 'string' ? message.type : 'event';
      if (ALERT_TYPE.test(type)) device.addAlert({ ...message, type, topic: m.topic, received_at: new Date(m.now).toISOString() }); // ours win over the device's fields
    }
  });
}
