import type { BusCache, IngestedMessage } from '../../bus-cache/src/service.js';
import type { DebugRing } from '../../debug-ring/src/service.js';
import type { FleetHistory } from '../../fleet-history/src/service.js';
import { cardOf, watchedOf, type DeviceCard, type Presence } from './device-card.js';
import type { FleetEvent, FleetEventKind } from './event-kinds.js';
import { RatePace } from './rate-pace.js';
import { frameOf, SseClient, type SseClientOptions } from './sse-client.js';

export interface FleetEventHubOptions {
  cache: BusCache;
  ring: DebugRing;
  /** Least time between two `device` events of one device (changes in between are merged into the next). */
  deviceIntervalMs: number;
  /** Dets of one device: at most one per this period on average (a steady stream at that rate keeps all). */
  detsIntervalMs: number;
  /** How often presence (staleness) and the debug ring are looked at. */
  pollMs: number;
  heartbeatMs: number;
  maxBufferBytes: number;
  retryMs: number;
  now?: () => number;
  /**
   * A hub replica that divides the apply thins out the dets of devices another replica owns: a
   * client that asks for dets has its device (every device, without one) followed while it is connected.
   */
  follow?: (deviceId?: string) => () => void;
}

const INCIDENT_TYPE = /incident|anomaly|alert/i;

/**
 * Turns what the hub sees (bus cache messages, presence changes, debug ring events, history
 * samples) into events and fans each out to the SSE clients that asked for it. An event is framed
 * once, whatever the number of clients. One poll timer serves every client.
 */
export class FleetEventHub {
  private readonly clients = new Set<SseClient>();
  private readonly presence = new Map<string, Presence>();
  private readonly thermal = new Map<string, string | null>();
  /** Per device: when its last `device` event went, and the timer of the merged next one. */
  private readonly cardTimers = new Map<string, { lastAt: number; timer?: NodeJS.Timeout }>();
  private readonly detsPace: RatePace;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly poller: NodeJS.Timeout;
  private readonly heartbeat: NodeJS.Timeout;
  private ringSeq = 0;
  private ringSinceMs: number;
  private nextId = 1;
  private sent = 0;
  private slowDropped = 0;
  private readonly now: () => number;

  constructor(private readonly o: FleetEventHubOptions) {
    this.now = o.now ?? Date.now;
    this.detsPace = new RatePace(o.detsIntervalMs);
    this.ringSinceMs = this.now();
    const { cache } = o;
    for (const id of cache.deviceIds()) {
      const watched = watchedOf(cache, id, this.now());
      if (!watched) continue;
      this.presence.set(id, watched.presence);
      this.thermal.set(id, watched.thermal);
    }
    this.unsubscribe.push(
      cache.on('status', (m) => this.onDeviceMessage(m)),
      cache.on('telemetry', (m) => this.onDeviceMessage(m)),
      cache.on('health', (m) => this.onDeviceMessage(m)),
      cache.on('hello', (m) => this.onDeviceMessage(m)),
      cache.on('dets', (m) => this.onDets(m)),
      cache.on('events/+', (m) => this.onEvent(m)),
    );
    this.poller = setInterval(() => this.poll(), o.pollMs);
    this.heartbeat = setInterval(() => this.clients.forEach((c) => c.heartbeat()), o.heartbeatMs);
  }

  /** Listens to the history once it runs (it may start after this hub, or be restarted). */
  attachHistory(history: FleetHistory): () => void {
    return history.onSample((deviceId, sample) => this.emit({ kind: 'sample', deviceId, data: { device_id: deviceId, sample } }));
  }

  connect(options: Omit<SseClientOptions, 'onClose' | 'maxBufferBytes' | 'retryMs'>): SseClient {
    const unfollow = options.kinds.has('dets') ? this.o.follow?.(options.device) : undefined;
    const client: SseClient = new SseClient({
      ...options,
      maxBufferBytes: this.o.maxBufferBytes,
      retryMs: this.o.retryMs,
      onClose: () => {
        unfollow?.();
        this.clients.delete(client);
        if (client.slowDropped) this.slowDropped++;
      },
    });
    this.clients.add(client);
    // Every device's card first: a client (re)connecting has the whole fleet without another request.
    if (client.wants('device', null)) {
      for (const id of this.o.cache.deviceIds()) {
        if (!client.wants('device', id)) continue;
        const card = this.card(id);
        if (card) client.write(frameOf(this.nextId++, 'device', card));
      }
    }
    return client;
  }

  private card(deviceId: string): DeviceCard | undefined {
    const view = this.o.cache.view(deviceId, this.now());
    return view ? cardOf(view, this.o.cache.device(deviceId)?.latest.get('hello')?.message) : undefined;
  }

  stats(): { clients: number; events_sent: number; slow_dropped: number } {
    return { clients: this.clients.size, events_sent: this.sent, slow_dropped: this.slowDropped };
  }

  close(): void {
    clearInterval(this.poller);
    clearInterval(this.heartbeat);
    for (const u of this.unsubscribe) u();
    for (const t of this.cardTimers.values()) clearTimeout(t.timer);
    for (const c of [...this.clients]) c.end();
  }

  emit(event: FleetEvent): void {
    let frame: string | undefined;
    for (const client of this.clients) {
      if (!client.wants(event.kind, event.deviceId)) continue;
      frame ??= frameOf(this.nextId++, event.kind, event.data);
      client.write(frame);
      this.sent++;
    }
  }

  private wanted(kind: FleetEventKind, deviceId: string | null): boolean {
    for (const c of this.clients) if (c.wants(kind, deviceId)) return true;
    return false;
  }

  private onDeviceMessage(m: IngestedMessage): void {
    const watched = watchedOf(this.o.cache, m.deviceId, this.now());
    if (watched) {
      this.checkPresence(m.deviceId, watched.presence);
      this.checkThermal(m.deviceId, watched.thermal);
    }
    this.scheduleCard(m.deviceId);
  }

  private checkPresence(deviceId: string, now: Presence): void {
    const before = this.presence.get(deviceId);
    if (before === now) return;
    this.presence.set(deviceId, now);
    // The device's view is made only for a client that asked: a fleet coming online with no console
    // open made 5 000 of them for nobody.
    const view = this.wanted('presence', deviceId) ? this.o.cache.view(deviceId, this.now()) : undefined;
    if (view) {
      this.emit({
        kind: 'presence',
        deviceId,
        data: {
          device_id: deviceId,
          presence: now,
          previous: before ?? null,
          online: view.online,
          offline_since: view.offline_since,
          at: new Date(this.now()).toISOString(),
        },
      });
    }
    // A card follows at once: a presence change must not wait for the per-device interval.
    this.sendCard(deviceId);
  }

  private checkThermal(deviceId: string, now: string | null): void {
    const before = this.thermal.get(deviceId);
    if (before === now) return;
    this.thermal.set(deviceId, now);
    if (before === undefined || before === null) return; // a first reading (from unknown) is no change
    // As for presence: the view (for the die temperature) only for a client that asked.
    if (!this.wanted('thermal', deviceId)) return;
    const view = this.o.cache.view(deviceId, this.now());
    const dieTemp = view ? cardOf(view).die_temp_c : null;
    this.emit({ kind: 'thermal', deviceId, data: { device_id: deviceId, from: before, to: now, die_temp_c: dieTemp } });
  }

  private scheduleCard(deviceId: string): void {
    // No timer for a card nobody asked: a client that connects gets every card at once (connect).
    if (!this.wanted('device', deviceId)) return;
    const entry = this.cardTimers.get(deviceId) ?? { lastAt: 0 };
    this.cardTimers.set(deviceId, entry);
    if (entry.timer) return;
    const wait = entry.lastAt + this.o.deviceIntervalMs - this.now();
    if (wait <= 0) return this.sendCard(deviceId);
    entry.timer = setTimeout(() => this.sendCard(deviceId), wait);
  }

  private sendCard(deviceId: string): void {
    const entry = this.cardTimers.get(deviceId) ?? { lastAt: 0 };
    clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.lastAt = this.now();
    this.cardTimers.set(deviceId, entry);
    if (!this.wanted('device', deviceId)) return;
    const card = this.card(deviceId);
    if (card) this.emit({ kind: 'device', deviceId, data: card });
  }

  private onDets(m: IngestedMessage): void {
    if (!this.wanted('dets', m.deviceId) || !this.detsPace.take(m.deviceId, m.receivedAt)) return;
    const { timestamp, dets, person_count, captured_at, frame_width, frame_height } = m.message;
    // The frame's capture time and size go along when the device says them: the console pairs boxes with a snapshot by the one and maps them by the other.
    const frame = captured_at === undefined ? {} : { captured_at, frame_width, frame_height };
    this.emit({ kind: 'dets', deviceId: m.deviceId, data: { device_id: m.deviceId, timestamp, dets, person_count, ...frame } });
  }

  private onEvent(m: IngestedMessage): void {
    const type = typeof m.message.type === 'string' ? m.message.type : m.suffix;
    if (!INCIDENT_TYPE.test(type) && !INCIDENT_TYPE.test(m.suffix)) return;
    this.emit({
      kind: 'incident',
      deviceId: m.deviceId,
      data: { device_id: m.deviceId, topic: m.topic, received_at: new Date(m.receivedAt).toISOString(), message: m.message },
    });
  }

  /** Staleness has no message of its own: looked at on the timer, with the debug ring's new events. */
  private poll(): void {
    const now = this.now();
    for (const id of this.o.cache.deviceIds()) {
      const watched = watchedOf(this.o.cache, id, now);
      if (watched) this.checkPresence(id, watched.presence);
    }
    if (this.clients.size === 0) {
      this.ringSinceMs = this.now();
      return;
    }
    const kinds = this.o.ring.kinds().filter((k) => k !== 'ingest');
    // `since` is strict and events of one millisecond share it: ask from a millisecond before, drop what was sent.
    const page = this.o.ring.query({ kinds, sinceMs: this.ringSinceMs - 1, limit: 1000 });
    for (const e of page.events) {
      if (e.seq <= this.ringSeq) continue;
      this.ringSeq = e.seq;
      this.ringSinceMs = Math.max(this.ringSinceMs, Date.parse(e.timestamp));
      this.emit({ kind: 'ring', deviceId: e.device_id ?? null, data: e });
    }
  }
}
