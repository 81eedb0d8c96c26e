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
  /** The cards' device ids in order (sorted again only when a device is added). */
  deviceIds: string[];
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
  deviceIds: [],
  health: null,
  ring: [],
  dets: {},
  detsRecent: {},
  detsFrom: {},
  incidents: [],
};
const listeners = new Set<() => void>();
/** Cards and ring events that came since the last frame: applied together, once a frame. */
const pendingCards = new Map<string, DeviceCard>();
let pendingRing: RingEvent[] = [];
let frameAsked = false;

export function getState(): State {
  return state;
}

/**
 * The state changes at once; the components hear of it once a frame. A fleet of 1 000 sends 1 000
 * cards a second, in many network chunks: rendering the page for each chunk redrew every card on it
 * each time (150 redraws of the whole page a second, half the main thread).
 */
export function setState(patch: Partial<State> | ((s: State) => Partial<State>)): void {
  state = { ...state, ...(typeof patch === 'function' ? patch(state) : patch) };
  askFrame();
}

function askFrame(): void {
  if (frameAsked) return;
  frameAsked = true;
  // A hidden tab runs no animation frames: it takes the changes at a slower pace (its timers are throttled too).
  if (document.hidden) setTimeout(onFrame, 250);
  else requestAnimationFrame(onFrame);
}

function onFrame(): void {
  frameAsked = false;
  if (pendingCards.size > 0) {
    const cards = { ...state.cards };
    for (const [id, card] of pendingCards) cards[id] = card;
    pendingCards.clear();
    state = { ...state, cards, deviceIds: Object.keys(cards).length === state.deviceIds.length ? state.deviceIds : sortedIds(cards) };
  }
  if (pendingRing.length > 0) {
    const seen = new Set(state.ring.map((e) => e.seq));
    const merged = [...state.ring, ...pendingRing.filter((e) => !seen.has(e.seq))].sort((a, b) => a.seq - b.seq);
    pendingRing = [];
    state = { ...state, ring: merged.slice(-RING_KEPT) };
  }
  listeners.forEach((l) => l());
}

const byId = new Intl.Collator(undefined).compare;
const sortedIds = (cards: Record<string, DeviceCard>) => Object.keys(cards).sort(byId);

/** A device's card from the hub: the newest of each device is applied on the next frame. */
export function putCard(card: Omit<DeviceCard, 'received_at'>): void {
  pendingCards.set(card.device_id, { ...card, received_at: Date.now() });
  askFrame();
}

export function addRingEvents(events: RingEvent[]): void {
  pendingRing.push(...events);
  // Only the newest RING_KEPT are kept: a hidden tab (no frames) must not pile them up meanwhile.
  if (pendingRing.length > 2 * RING_KEPT) pendingRing = pendingRing.slice(-RING_KEPT);
  askFrame();
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
