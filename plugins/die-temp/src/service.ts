import { serviceToken } from '../../../core/src/plugin/service-token.js';

/** The SoC die temperature, from a thermal zone file or the simulated temperature script. */
export interface DieTemperature {
  /** Latest reading in degrees Celsius. */
  current(): number;
  onReading(listener: (celsius: number) => void): () => void;
}

export const DieTemperatureToken = serviceToken<DieTemperature>('die-temperature');
