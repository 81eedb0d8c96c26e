import { serviceToken } from '../../../core/src/plugin/service-token.js';
import type { Scenario } from './scenario-schema.js';

/** The running scenario, provided by the camera plugin in sim mode (the die-temp plugin reads its script). */
export interface SimScenarioInfo {
  name: string;
  path: string;
  scenario: Scenario;
  /** Scripted die temperature at atMs since the source started (defaults to now); undefined without a script. */
  temperatureAt(atMs?: number): number | undefined;
}

export const SimScenarioToken = serviceToken<SimScenarioInfo>('sim-scenario');
