import type { ThermalReading, ThermalState } from './service.js';
import { ThermalStateMachine } from './thermal-state-machine.js';
import type { ThermalThresholds } from './thermal-thresholds.js';

/**
 * The die's thermal state at every layer: each reading goes through the state machine, and the
 * state is unknown (null, with the reason) until the first reading or while the thresholds are
 * invalid; never NORMAL by default. Listeners hear every change, unknown → known included.
 */
export class ThermalClassifier {
  private readonly machine: ThermalStateMachine | undefined;
  private readonly invalid: string | undefined;
  private known = false;
  private readonly listeners = new Set<(state: ThermalState, celsius: number) => void>();

  constructor(
    thresholds: ThermalThresholds | { invalid: string },
    private readonly onListenerError: (err: unknown) => void = () => undefined,
  ) {
    this.machine = 'invalid' in thresholds ? undefined : new ThermalStateMachine(thresholds);
    this.invalid = 'invalid' in thresholds ? thresholds.invalid : undefined;
  }

  /** One reading of the die (finite; the caller never feeds a failed read). */
  feed(celsius: number): void {
    if (!this.machine) return;
    const { state, changed } = this.machine.feed(celsius);
    const first = !this.known;
    this.known = true;
    if (!changed && !first) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(state, celsius);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  /** The state now; `temperatureReason` says why the die has no reading when it has none. */
  reading(temperatureReason: string | null): ThermalReading {
    if (this.invalid !== undefined) return { state: null, reason: `thermal thresholds invalid: ${this.invalid}`, unknown: 'thresholds_invalid' };
    if (!this.known || !this.machine) {
      return { state: null, reason: `die temperature unknown: ${temperatureReason ?? 'not read yet'}`, unknown: 'temperature_unknown' };
    }
    return { state: this.machine.state, reason: null };
  }

  onChange(listener: (state: ThermalState, celsius: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  clear(): void {
    this.listeners.clear();
  }
}
