import { STATE_JSON } from '../services/hub-services.js';

/** The JSON text of a snapshot: as its owner serialised it (STATE_JSON), else JSON.stringify. */
export function snapshotJson(value: unknown): string {
  if (typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[STATE_JSON] === true) {
    const json = (value as { json?: unknown }).json;
    if (typeof json === 'string') return json;
  }
  return JSON.stringify(value);
}

/** The saved envelope of every store (`lookout-hub-state/1`), the value's text put in as it is. */
export function envelopeJson(format: string, key: string, value: unknown): string {
  return `{"format":${JSON.stringify(format)},"key":${JSON.stringify(key)},"saved_at":"${new Date().toISOString()}","value":${snapshotJson(value)}}`;
}
