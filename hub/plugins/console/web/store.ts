import { useEffect, useState } from 'preact/hooks';
import type { ConnectionState } from './events.js';
import type { DeviceCard as HubDeviceCard } from '../../fleet-events/src/service.js';
import type { DetsFrame } from './dets-pairing.js';

/** The card the hub sends (fleet-events), with when the page got it. */
export interface DeviceCard extends Omit<HubDeviceCard, 'plugins'> {
  plugins: { name: string; state: string; code?: string | null; message?: string | null }[] | null;
  /** When the page got this card (its age ticks on from there). */
  received_at: number;
}

export interface DeviceHealth {
  device_id: string;
  presence: string;
  storage_health: string | null;
  storage: Record<string, unknown> | null;
  recorder: {
    status: string | null;
    reason: string | null;
    chunk_count: number | null;
    latest_chunk: Record<string, unknown> | null;
    last_health_at: string | null;
  };
  readiness: { grade: 'ready' | 'degraded' | 'not_ready'; failing: string[]; reason: string | null; modules: Record<string, string> | null };
}

export interface FleetHealth {
  fleet: {
    status: string;
    device_count: number;
    online: number;
    offline: number;
    stale: number;
    readiness: Record<string, number>;
    storage_health: Record<string, number>;
  };
  devices: Record<string, DeviceHealth>;
}

export interface RingEvent {
  seq: number;
  timestamp: string;
  kind: string;
  device_id?: string;
  message: string;
  details?: unknown;
}

export interface Detection {
  c: number;
  p: number;
  b: number[];
  track_id?: number;
}

export interface State {
  auth: 'checking' | 'needed' | 'ok';
  authError: string | null;
  connection: ConnectionState;
  connectionDetail: string | null;
  cards: Record<string, DeviceCard>;
  health: FleetHealth | null;
  ring: RingEvent[];
  dets: Record<string, DetsFrame>;
  /** Each device's dets of the last RECENT_DETS_MS, oldest first: a snapshot takes those of its own instant. */
  detsRecent: Record<string, (DetsFrame & { received: number })[]>;
  /** Each device's captured_at of the first dets of the stream now open: the page knows no dets before it. */
  detsFrom: Record<string, string>;
  /** Newest first. */
  incidents: { device_id: string; at: string; message: string }[];
}

const RING_KEPT = 500;

let state: State = {
  auth: 'checking',
  authError: null,
  connection: 'connecting',
  connectionDetail: null,
  cards: {},
  health: null,
  ring: [],
  dets: {},
  detsRecent: {},
  detsFrom: {},
  incidents: [],
};
const listeners = new Set<() => void>();

export function getState(): State {
  return state;
}

export function setState(patch: Partial<State> | ((s: State) => Partial<State>)): void {
  state = { ...state, ...(typeof patch === 'function' ? patch(state) : patch) };
  listeners.forEach((l) => l());
}

export function putCard(card: Omit<DeviceCard, 'received_at'>): void {
  setState((s) => ({ cards: { ...s.cards, [card.device_id]: { ...card, received_at: Date.now() } } }));
}

export function addRingEvents(events: RingEvent[]): void {
  setState((s) => {
    const seen = new Set(s.ring.map((e) => e.seq));
    const merged = [...s.ring, ...events.filter((e) => !seen.has(e.seq))].sort((a, b) => a.seq - b.seq);
    return { ring: merged.slice(-RING_KEPT) };
  });
}

/** The store in a component: it renders again on every change. */
export function useStore(): State {
  const [, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((t) => t + 1);
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return state;
}
