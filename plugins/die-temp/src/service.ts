import { serviceToken } from 'lookout/core';

/** The SoC die temperature, from a thermal zone file or the simulated temperature script. */
export interface DieTemperature {
  /** Latest reading in degrees Celsius; null while the sensor has never been read (see `reason`). */
  current(): number | null;
  /** Why `current()` is null, or why the last reading failed; null while readings succeed. */
  reason(): string | null;
  onReading(listener: (celsius: number) => void): () => void;
}

export const DieTemperatureToken = serviceToken<DieTemperature>('die-temperature');
