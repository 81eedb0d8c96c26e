import type { DetectionThrottle } from '../../detector/src/service.js';
import type { ThermalState } from './service.js';

export interface ThrottlePolicy {
  /** Detector stride while THERMAL_WARN (frames per second). */
  warnStrideFps: number;
}

/** What the detector does in a state: full rate, a lowered stride, or no neural work at all. */
export function throttleFor(state: ThermalState, policy: ThrottlePolicy): DetectionThrottle {
  switch (state) {
    case 'NORMAL':
      return { suspended: false };
    case 'THERMAL_WARN':
      return { strideFps: policy.warnStrideFps, suspended: false };
    case 'THERMAL_CRITICAL':
      return { suspended: true };
  }
}
