/** Numbers the spec fixes for the wire ("Limits"); shared by publishers, the hub and the verifier. */
export const WIRE_LIMITS = {
  /** Nominal telemetry and dets rate. */
  nominalRateHz: 10,
  /** Accepted telemetry and dets rate, inclusive. */
  acceptedRateHz: { min: 3, max: 15 },
  /** Period of `health`. */
  healthPeriodSec: 30,
  /** Default cache staleness threshold (`stale_sec`). */
  staleSec: 120,
  /** Share of sampled messages that must validate for the contract verifier to pass. */
  minValidRatio: 0.8,
  /** Production person gate: class 0 with at least this confidence. */
  personConfidenceGate: 0.35,
  /** Class id of a person in the production class map. */
  personClassId: 0,
  /** Length of a recording segment, seconds. */
  recordingSegmentSec: 60,
} as const;
