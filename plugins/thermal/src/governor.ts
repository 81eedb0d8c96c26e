import type { DetectionThrottle } from '../../detector/src/service.js';
import type { ThermalGovernor, ThermalState } from './service.js';
import { throttleFor, type ThrottlePolicy } from './throttle-policy.js';

export interface GovernorOptions {
  policy: ThrottlePolicy;
  /** Where the throttle goes (the detector pipeline); called once at start and on every change. */
  applyThrottle?: (throttle: DetectionThrottle) => void;
  /** Told about listener failures, which must not stop the governor. */
  onListenerError?: (err: unknown) => void;
  /** Clock of the suspension's start (ms). */
  now?: () => number;
}

/**
 * The thermal governor service: acts on the die's thermal state (computed by the die-temp plugin
 * at every layer), throttling the detector on every change, and tells listeners afterwards (the
 * status plugin republishes status).
 */
export class Governor implements ThermalGovernor {
  private current: ThermalState | null = null;
  private readonly listeners = new Set<(state: ThermalState, celsius: number) => void>();
  private lastCelsius: number | undefined;
  private suspended: { since: string; reason: string } | null = null;

  constructor(private readonly options: GovernorOptions) {
    // Until the die's state is known nothing is throttled: full rate is what the device was configured for.
    options.applyThrottle?.(throttleFor('NORMAL', options.policy));
  }

  state(): ThermalState | null {
    return this.current;
  }

  /** The reading that changed the state, if any. */
  celsius(): number | undefined {
    return this.lastCelsius;
  }

  onChange(listener: (state: ThermalState, celsius: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  suspension(): { since: string; reason: string } | null {
    return this.suspended;
  }

  /** The die's state (changed, or as found at start): throttle, then tell listeners. */
  apply(state: ThermalState, celsius: number): void {
    this.lastCelsius = celsius;
    if (state === this.current) return;
    this.current = state;
    // Throttle first: by the time anyone hears of WARN or CRITICAL the detector already obeys it.
    const throttle = throttleFor(state, this.options.policy);
    this.options.applyThrottle?.(throttle);
    if (!throttle.suspended) this.suspended = null;
    else this.suspended ??= { since: new Date((this.options.now ?? Date.now)()).toISOString(), reason: `${state} at ${celsius} C` };
    for (const listener of [...this.listeners]) {
      try {
        listener(state, celsius);
      } catch (err) {
        this.options.onListenerError?.(err);
      }
    }
  }
}
