import { serviceToken } from 'lookout/core';
import type { DeviceReadiness, DeviceReadinessView, FleetGrade } from './readiness-schemas.js';

export {
  READINESS_MODULES,
  DeviceReadinessSchema,
  DeviceReadinessViewSchema,
  FleetGradeSchema,
  GradeSchema,
  ModuleGradeSchema,
  type DeviceReadiness,
  type DeviceReadinessView,
  type FleetGrade,
  type Grade,
  type ModuleGrade,
  type ModuleResult,
  type ReadinessModule,
} from './readiness-schemas.js';

/** The fleet's readiness as GET /fleet/readiness shows it: stored grades with their age, and the fleet's. */
export interface ReadinessSnapshot {
  fleet: FleetGrade;
  devices: Map<string, DeviceReadinessView>;
}

/**
 * The readiness grades for other hub plugins (fleet-health shows a device's grade from here), read
 * from the hub's shared state, so every replica answers alike.
 */
export interface ReadinessGrades {
  /** Every stored grade, and the fleet's grade over the devices this hub knows. */
  snapshot(): Promise<ReadinessSnapshot>;
  /** Checks these devices now (every known device when none is given), stores and returns their grades. */
  validate(deviceIds?: string[], signal?: AbortSignal): Promise<DeviceReadiness[]>;
}

export const READINESS_GRADES = serviceToken<ReadinessGrades>('readiness-grades');
