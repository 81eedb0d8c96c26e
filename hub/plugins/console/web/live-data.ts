import { getJson, HubError } from './api.js';
import { openEventStream } from './events.js';
import { addRingEvents, getState, putCard, setState, type DeviceCard, type FleetHealth, type RingEvent } from './store.js';

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

/**
 * The fleet's live feed for the whole page: cards, presence, thermal changes, incidents, ring events.
 * Not the history samples: one a device every few seconds is half the stream at 1 000 devices, and
 * only the plots of the device shown use them (they open a stream of their own). Returns its stop.
 */
export function startLiveData(): () => void {
  const stopStream = openEventStream({
    path: '/fleet/events?kind=device,presence,thermal,incident,ring',
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
      }
    },
  });
  const timer = window.setInterval(() => void refreshHealth(), 15_000);
  return () => {
    stopStream();
    clearInterval(timer);
  };
}
