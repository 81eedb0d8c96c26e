import type { DetectionThrottle } from '../../detector/src/service.js';
import type { ThermalGovernor, ThermalState } from './service.js';
import { ThermalStateMachine, throttleFor, type ThermalThresholds, type ThrottlePolicy } from './governor-state-machine.js';

export interface GovernorOptions {
  thresholds: ThermalThresholds;
  policy: ThrottlePolicy;
  /** Where the throttle goes (the detector pipeline); called once at start and on every change. */
  applyThrottle?: (throttle: DetectionThrottle) => void;
  /** Told about listener failures, which must not stop the governor. */
  onListenerError?: (err: unknown) => void;
}

/**
 * The thermal governor service: turns die temperature readings into a thermal state, throttles the
 * detector on every change and tells listeners (the status plugin republishes status).
 */
export class Governor implements ThermalGovernor {
  private readonly machine: ThermalStateMachine;
  private readonly listeners = new Set<(state: ThermalState, celsius: number) => void>();
  private lastCelsius: number | undefined;

  constructor(private readonly options: GovernorOptions) {
    this.machine = new ThermalStateMachine(options.thresholds);
    options.applyThrottle?.(throttleFor(this.machine.state, options.policy));
  }

  state(): ThermalState {
    return this.machine.state;
  }

  /** The last reading fed, if any. */
  celsius(): number | undefined {
    return this.lastCelsius;
  }

  onChange(listener: (state: ThermalState, celsius: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One reading. Throws (argument_invalid) on a non-finite reading and keeps the state it had. */
  feed(celsius: number): ThermalState {
    const { state, changed } = this.machine.feed(celsius);
    this.lastCelsius = celsius;
    if (changed) {
      // Throttle first: by the time anyone hears of WARN or CRITICAL the detector already obeys it.
      this.options.applyThrottle?.(throttleFor(state, this.options.policy));
      for (const listener of [...this.listeners]) {
        try {
          listener(state, celsius);
        } catch (err) {
          this.options.onListenerError?.(err);
        }
      }
    }
    return state;
  }
}
