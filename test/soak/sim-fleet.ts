import { BUS_CONTRACTS } from '../../core/src/contracts/bus-contracts.js';
import { MqttBus } from '../../lib/mqtt/mqtt-bus.js';

/** The topics a simulated device publishes and the soak counts. */
export const SIM_KINDS = ['telemetry', 'dets', 'health', 'status'] as const;
export type SimKind = (typeof SIM_KINDS)[number];

export interface KindCounters {
  /** Publishes started (each with the next sequence number). */
  sent: number;
  /** PUBACKs received. */
  acked: number;
  /** Publishes the bus rejected (should stay 0). */
  failed: number;
  /** Publishes not started because too many were pending (should stay 0). */
  skipped: number;
}

export interface SimRates {
  detsHz: number;
  telemetryHz: number;
  healthSec: number;
  statusSec: number;
}

/** Most publishes one simulated device may have waiting for PUBACK; past it, it skips (and counts). */
const MAX_PENDING_PER_DEVICE = 2_000;

/**
 * One simulated device: an MQTT client (the project's MqttBus: persistent session, QoS 1, its
 * reconnect backoff) publishing spec-shaped messages, each carrying `soak_seq` (its sequence number
 * per topic, from 1) and `soak_device`: fields the loose wire contracts accept.
 */
export class SimDevice {
  readonly counters = new Map<SimKind, KindCounters>(SIM_KINDS.map((k) => [k, { sent: 0, acked: 0, failed: 0, skipped: 0 }]));
  readonly nextDue = new Map<SimKind, number>();
  pending = 0;
  readonly failures: string[] = [];

  constructor(
    readonly id: string,
    readonly bus: MqttBus,
  ) {}

  publish(kind: SimKind): void {
    const c = this.counters.get(kind)!;
    if (this.pending >= MAX_PENDING_PER_DEVICE) {
      c.skipped++;
      return;
    }
    const seq = ++c.sent;
    const contract = BUS_CONTRACTS[kind];
    this.pending++;
    this.bus
      .publish(`devices/${this.id}/${kind}`, JSON.stringify(simMessage(kind, this.id, seq)), { qos: contract.qos, retain: contract.retain })
      .then(
        () => c.acked++,
        (err: unknown) => {
          c.failed++;
          if (this.failures.length < 5) this.failures.push(`${kind} #${seq}: ${(err as Error).message}`);
        },
      )
      .finally(() => this.pending--);
  }
}

/** A spec-shaped message of `kind` (checked against the wire contract at start). */
export function simMessage(kind: SimKind, deviceId: string, seq: number): Record<string, unknown> {
  const timestamp = new Date().toISOString();
  const die = 50 + (seq % 20) / 2;
  const extra = { soak_seq: seq, soak_device: deviceId };
  if (kind === 'telemetry') {
    return { timestamp, camera_id: 'soak_cam', detections: [{ c: 0, p: 0.9, b: [10, 20, 110, 220] }], telemetry: { die_temp: die, fps: 10 }, ...extra };
  }
  if (kind === 'dets') {
    const n = seq % 3;
    return {
      timestamp,
      camera_id: 'soak_cam',
      dets: Array.from({ length: n }, (_, i) => ({ c: 0, p: 0.8, b: [10 + i, 20, 110, 220], track_id: 1 + i })),
      person_count: n,
      rf_detr_precomputed: true,
      ...extra,
    };
  }
  if (kind === 'health') {
    return {
      timestamp,
      status: 'ok',
      storage_health: 'OK',
      cert_fingerprint_present: true,
      serial: `SER-${deviceId}`,
      role: 'soak_cam',
      storage: { free_gb: 40, used_pct: 35, total_gb: 64, path: '/data/recordings' },
      device_id: deviceId,
      ...extra,
    };
  }
  return { state: 'online', thermal_state: 'NORMAL', die_temp_c: die, timestamp, device_id: deviceId, ...extra };
}

/** Throws when a message the simulator writes no longer passes its wire contract. */
export function checkSimMessages(): void {
  for (const kind of SIM_KINDS) {
    const parsed = BUS_CONTRACTS[kind].schema.safeParse(simMessage(kind, 'soak-sim-check', 1));
    if (!parsed.success) throw new Error(`the simulated ${kind} message fails its contract: ${JSON.stringify(parsed.error.issues[0])}`);
  }
}

/**
 * The simulated part of the fleet: connects its devices, then publishes on one timer (every 50 ms,
 * each device's topics due at their own rate, staggered). Pausable, so that a hub restart happens
 * at a point where every count is known.
 */
export class SimFleet {
  readonly devices: SimDevice[] = [];
  readonly byId = new Map<string, SimDevice>();
  private timer: NodeJS.Timeout | null = null;
  private paused = false;
  private readonly periods: Record<SimKind, number>;

  constructor(
    private readonly url: string,
    readonly ids: string[],
    rates: SimRates,
  ) {
    const period = (hz: number) => (hz > 0 ? 1000 / hz : Infinity);
    this.periods = { dets: period(rates.detsHz), telemetry: period(rates.telemetryHz), health: rates.healthSec * 1000, status: rates.statusSec * 1000 };
  }

  /** Connects every device (a few at a time); bounded by each connect's own timeout. */
  async connect(): Promise<void> {
    for (let i = 0; i < this.ids.length; i += 20) {
      const batch = this.ids.slice(i, i + 20);
      const buses = await Promise.all(
        batch.map((id) =>
          MqttBus.connect({
            url: this.url,
            clientId: `soak-${id}`,
            clean: false,
            keepaliveSec: 30,
            reconnect: { initialMs: 200, maxMs: 5_000 },
            connectTimeoutMs: 20_000,
            closeTimeoutMs: 3_000,
          }),
        ),
      );
      batch.forEach((id, j) => {
        const d = new SimDevice(id, buses[j]);
        this.devices.push(d);
        this.byId.set(id, d);
      });
    }
  }

  start(): void {
    const now = Date.now();
    for (const d of this.devices) {
      for (const kind of SIM_KINDS) {
        const p = this.periods[kind];
        // The first status at once (a device announces itself), the rest staggered over one period.
        d.nextDue.set(kind, kind === 'status' ? now : Number.isFinite(p) ? now + Math.random() * p : Infinity);
      }
    }
    this.timer = setInterval(() => this.tick(), 50);
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  /** Stops publishing for good. */
  stopPublishing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  pending(): number {
    return this.devices.reduce((n, d) => n + d.pending, 0);
  }

  /** Resolves true when every publish has its PUBACK, false after `timeoutMs`. */
  async waitAcked(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending() > 0) {
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
    return true;
  }

  totals(): Record<SimKind, KindCounters> {
    const out = {} as Record<SimKind, KindCounters>;
    for (const kind of SIM_KINDS) {
      out[kind] = { sent: 0, acked: 0, failed: 0, skipped: 0 };
      for (const d of this.devices) {
        const c = d.counters.get(kind)!;
        out[kind].sent += c.sent;
        out[kind].acked += c.acked;
        out[kind].failed += c.failed;
        out[kind].skipped += c.skipped;
      }
    }
    return out;
  }

  reconnects(): number {
    return this.devices.reduce((n, d) => n + Math.max(0, d.bus.stats().connects - 1), 0);
  }

  sessionsLost(): number {
    // After a reconnect the broker should have resumed the session (persistence on).
    return this.devices.filter((d) => d.bus.stats().connects > 1 && !d.bus.stats().sessionPresent).length;
  }

  async close(): Promise<void> {
    this.stopPublishing();
    await Promise.all(this.devices.map((d) => d.bus.close().catch(() => undefined)));
  }

  private tick(): void {
    if (this.paused) return;
    const now = Date.now();
    for (const d of this.devices) {
      for (const kind of SIM_KINDS) {
        const due = d.nextDue.get(kind)!;
        if (due > now) continue;
        const p = this.periods[kind];
        d.publish(kind);
        // Late by more than a period (a pause, a slow loop): no catch-up burst, the rhythm restarts.
        d.nextDue.set(kind, due + p < now ? now + p : due + p);
      }
    }
  }
}
