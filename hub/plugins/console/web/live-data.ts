import { getJson, HubError } from './api.js';
import { openEventStream } from './events.js';
import { addRingEvents, getState, putCard, setState, type DeviceCard, type FleetHealth, type RingEvent } from './store.js';

export interface Sample {
  t: number;
  die_temp_c: number | null;
  camera_fps: number | null;
  detection_fps: number | null;
  person_count: number | null;
}

const sampleListeners = new Set<(deviceId: string, sample: Sample) => void>();

/** History samples as the hub streams them (the device view's plots add them). */
export function onSample(listener: (deviceId: string, sample: Sample) => void): () => void {
  sampleListeners.add(listener);
  return () => sampleListeners.delete(listener);
}

let healthTimer: number | undefined;

/** /fleet/health (recorder, storage, readiness per device and the fleet's summary), again soon after a presence change. */
export function refreshHealthSoon(delayMs = 400): void {
  clearTimeout(healthTimer);
  healthTimer = window.setTimeout(() => void refreshHealth(), delayMs);
}

export async function refreshHealth(): Promise<void> {
  try {
    setState({ health: await getJson<FleetHealth>('/fleet/health') });
  } catch (err) {
    if (!(err instanceof HubError && err.status === 401)) console.warn('fleet health', err);
  }
}

/** The fleet's live feed for the whole page: cards, presence, ring events, samples. Returns its stop. */
export function startLiveData(): () => void {
  const stopStream = openEventStream({
    path: '/fleet/events',
    onState: (connection, detail) => {
      const was = getState().connection;
      setState({ connection, connectionDetail: detail ?? null });
      // Back after a gap: what changed meanwhile comes with the cards the hub sends first; health is asked again.
      if (connection === 'live' && was !== 'live') refreshHealthSoon(0);
    },
    onEvent: (name, data) => {
      if (name === 'device') putCard(data as Omit<DeviceCard, 'received_at'>);
      else if (name === 'presence') refreshHealthSoon();
      else if (name === 'ring') addRingEvents([data as RingEvent]);
      else if (name === 'incident') {
        const i = data as { device_id: string; received_at: string; message: Record<string, unknown> };
        const said = i.message.message ?? i.message.type;
        const text = typeof said === 'string' ? said : 'incident';
        setState((st) => ({ incidents: [{ device_id: i.device_id, at: i.received_at, message: text }, ...st.incidents].slice(0, 50) }));
      } else if (name === 'sample') {
        const s = data as { device_id: string; sample: Sample };
        sampleListeners.forEach((l) => l(s.device_id, s.sample));
      }
    },
  });
  const timer = window.setInterval(() => void refreshHealth(), 15_000);
  return () => {
    stopStream();
    clearInterval(timer);
  };
}
