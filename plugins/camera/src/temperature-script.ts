import type { TemperaturePoint } from './scenario-schema.js';

/**
 * The scripted die temperature at `tS` seconds after the source started: linear between points,
 * held before the first and after the last. It does not loop with the scene, because a die that
 * heated up does not cool when the clip restarts.
 */
export function temperatureAt(script: readonly TemperaturePoint[], tS: number): number {
  const first = script[0];
  if (!first) throw new RangeError('empty temperature script');
  if (tS <= first.atS) return first.celsius;
  for (let i = 1; i < script.length; i++) {
    const b = script[i];
    if (tS <= b.atS) {
      const a = script[i - 1];
      return a.celsius + ((b.celsius - a.celsius) * (tS - a.atS)) / (b.atS - a.atS);
    }
  }
  return script[script.length - 1].celsius;
}
