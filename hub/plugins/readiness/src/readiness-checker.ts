import { LookoutError, toLookoutError, type Logger, type PluginClock } from 'lookout/core';
import { mapBounded } from 'lookout/lib/limits';
import type { HubSharedState } from 'lookout/hub';
import type { DeviceRegistry } from '../../registry/src/service.js';
import { collectFacts, type FactSources } from './collect-facts.js';
import { gradeDevice } from './grade-device.js';
import type { GradeStore } from './grade-store.js';
import { JoinedWork } from './joined-work.js';
import type { DeviceReadiness } from './readiness-schemas.js';
import { StartPace } from './start-pace.js';

export interface CheckerOptions {
  sources: FactSources;
  registry: DeviceRegistry;
  store: GradeStore;
  shared: HubSharedState;
  clock: Pick<PluginClock, 'now' | 'setTimeout' | 'clear'>;
  log: Logger;
  /** Written into every record: which replica checked. */
  hubId: string;
  intervalMs: number;
  checkTimeoutMs: number;
  /** A grade no check refreshed for this long, of a device this replica does not know, is dropped. */
  staleAfterMs: number;
  concurrency: number;
  /** The checks the hub sets off itself (rounds, changes) start at most this many a second; checks asked for (validate) are not held. */
  startsPerSecond: number;
}

/** HUB_SHARED scope of the scheduled rounds' claims: one replica runs each round. */
const ROUND_SCOPE = 'readiness-round';

/**
 * Runs the readiness checks: a round over every device the hub knows (scheduled, at most one at a
 * time), a device on its own (its presence or plugins changed), and checks on demand (POST
 * /fleet/validate). Devices are checked a few at a time (`concurrency`), each within
 * `checkTimeoutMs`, and each result is stored in the shared state before it is answered. Whoever
 * asks for a device being checked already joins that check: N concurrent validates make one check
 * per device, not N.
 */
export class ReadinessChecker {
  private readonly inFlight = new JoinedWork<DeviceReadiness | undefined>(undefined);
  private readonly pending = new Map<string, NodeJS.Timeout>();
  /** Devices whose change delay ran out, waiting for a free check slot (in arrival order). */
  private readonly due = new Set<string>();
  private dueRunning = 0;
  private round: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private readonly pace: StartPace;

  constructor(private readonly o: CheckerOptions) {
    this.pace = new StartPace(o.startsPerSecond, o.clock);
  }

  /** Every device this replica knows: the registry's and those the bus cache holds. */
  knownDevices(): string[] {
    return [...new Set([...this.o.registry.list().map((d) => d.deviceId), ...this.o.sources.cache.deviceIds()])].sort();
  }

  /**
   * Fresh checks of these devices (POST /fleet/validate), stored, in their order: a check running
   * already is joined. When `signal` aborts this stops waiting; a check nobody else waits for stops.
   */
  async validate(ids: string[], signal: AbortSignal): Promise<DeviceReadiness[]> {
    const done = await mapBounded(ids, this.o.concurrency, (id) => this.join(id, signal));
    return done.filter((r): r is DeviceReadiness => r !== undefined);
  }

  /**
   * A scheduled round: skipped when another replica claimed this interval's round, or one is still
   * running here. A device being checked already is not checked twice. When the claim cannot be
   * made (the shared state unreachable) the round is skipped too: its grades could not be stored.
   */
  async scheduledRound(): Promise<void> {
    const slot = Math.floor(this.o.clock.now() / this.o.intervalMs);
    if ((await this.o.shared.claimOnce(ROUND_SCOPE, `round-${slot}`, this.o.intervalMs * 2)) !== 'claimed') return;
    await this.runRound();
  }

  /** A round over every known device now (at start); joins the one running. */
  runRound(): Promise<void> {
    this.round ??= this.roundNow().finally(() => (this.round = undefined));
    return this.round;
  }

  /**
   * Checks one device after `delayMs` (its status or hello changed); several changes in that time make
   * one check. These checks run `concurrency` at a time: a fleet that says hello at once (a broker
   * restart) would otherwise start a check of every device in the same instant.
   */
  checkSoon(deviceId: string, delayMs: number): void {
    if (this.stopping.signal.aborted || this.pending.has(deviceId) || this.due.has(deviceId)) return;
    const timer = this.o.clock.setTimeout(() => {
      this.pending.delete(deviceId);
      this.due.add(deviceId);
      this.runDue();
    }, delayMs);
    this.pending.set(deviceId, timer);
  }

  stop(): void {
    this.stopping.abort(new LookoutError('service_unavailable', 'the hub is stopping'));
    this.pace.stop();
    for (const t of this.pending.values()) this.o.clock.clear(t);
    this.pending.clear();
    this.due.clear();
  }

  private runDue(): void {
    while (this.dueRunning < this.o.concurrency && this.due.size > 0 && !this.stopping.signal.aborted) {
      const [deviceId] = this.due;
      this.due.delete(deviceId);
      this.dueRunning++;
      void this.paced(deviceId).finally(() => {
        this.dueRunning--;
        this.runDue();
      });
    }
  }

  private async roundNow(): Promise<void> {
    const ids = this.knownDevices();
    await mapBounded(ids, this.o.concurrency, (id) => this.paced(id));
    // Grades of devices gone from the registry and the cache are dropped once stale: a replica that
    // just started knows no device yet, and must not drop what the others keep fresh.
    const known = new Set(ids);
    const now = this.o.clock.now();
    for (const [id, record] of await this.o.store.all()) {
      if (!known.has(id) && now - Date.parse(record.checked_at) > this.o.staleAfterMs) await this.o.store.delete(id);
    }
  }

  /** A check the hub sets off itself: at its turn (StartPace), unless the hub stopped meanwhile. */
  private async paced(deviceId: string): Promise<DeviceReadiness | undefined> {
    await this.pace.turn();
    return this.stopping.signal.aborted ? undefined : this.join(deviceId);
  }

  /** The check of a device in flight, or a new one; without a signal the caller (a round, a change) waits until it ends. */
  private join(deviceId: string, signal?: AbortSignal): Promise<DeviceReadiness | undefined> {
    return this.inFlight.join(deviceId, signal, (cancel) => this.check(deviceId, cancel));
  }

  /**
   * One device's facts gathered within the check timeout, graded and stored; undefined when that
   * failed (logged). `cancel` aborts when every request waiting for it went away.
   */
  private check(deviceId: string, outer: AbortSignal): Promise<DeviceReadiness | undefined> {
    const bound = new AbortController();
    const timer = this.o.clock.setTimeout(
      () => bound.abort(new LookoutError('device_timeout', `the readiness check of ${deviceId} took longer than ${this.o.checkTimeoutMs} ms`)),
      this.o.checkTimeoutMs,
    );
    const signal = AbortSignal.any([outer, this.stopping.signal, bound.signal]);
    return (async () => {
      try {
        const at = this.o.clock.now();
        const facts = await collectFacts(this.o.sources, deviceId, this.o.registry.get(deviceId), at, signal);
        // Stopped by its callers (every client waiting went away, the hub stopping), not by its own bound:
        // what it saw says nothing of the device, and is not stored.
        if (outer.aborted || this.stopping.signal.aborted) return undefined;
        const record = gradeDevice(facts, this.o.hubId);
        await this.o.store.put(record);
        return record;
      } catch (err) {
        const e = toLookoutError(err);
        this.o.log.warn({ device_id: deviceId, code: e.code }, `readiness check failed: ${e.message}`);
        return undefined;
      } finally {
        this.o.clock.clear(timer);
      }
    })();
  }
}
