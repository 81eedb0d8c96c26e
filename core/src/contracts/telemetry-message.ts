import { z } from 'zod';
import { MaybeCelsiusSchema, NonNegativeIntSchema, RoleLabelSchema, ThermalStateSchema, TimestampSchema } from './common.js';
import { DetectionSchema } from './detection.js';

/**
 * Whether the frame of this telemetry went through a detector: `suspended` (the thermal governor
 * stopped neural work, so no detections is not an empty scene) and `off` (no detector at this
 * layer, or it failed) say why not.
 */
export const DETECTION_STATES = ['running', 'suspended', 'off'] as const;

/** Frames per second, measured; null while not measured (fewer than two frames read, or none read at all). */
const MeasuredRateSchema = z.number().nonnegative().nullable();

/**
 * The spec's `die_temp` and `fps`, and ours beside them. Every rate is measured over a sliding
 * window, never assumed from a configured stride; as Frigate reports camera, detection and
 * skipped fps, `fps` is the detection rate (0 while detection is suspended), `camera_fps` what the
 * camera delivered and `skipped_fps` what of it the detector did not process.
 */
export const TelemetryBlockSchema = z.looseObject({
  die_temp: MaybeCelsiusSchema,
  fps: NonNegativeIntSchema.describe('detection rate: frames through the detector per second over a sliding window (nominal 10); 0 while suspended'),
  camera_fps: MeasuredRateSchema.optional().describe('frames per second the camera delivered, measured from its frame counter'),
  skipped_fps: MeasuredRateSchema.optional().describe('camera frames per second the detector did not process'),
  thermal_state: ThermalStateSchema.nullable().optional().describe('the die against the thermal thresholds, at every layer; null while unknown'),
  thermal_state_reason: z.string().nullable().optional().describe('why thermal_state is null'),
  detection: z.enum(DETECTION_STATES).optional().describe('running; suspended by the thermal governor; or off (no detector at this layer, or it failed)'),
  detection_reason: z.string().nullable().optional().describe('why detection is not running'),
  suspended_since: TimestampSchema.nullable().optional().describe('when the current suspension began; null unless suspended'),
});

/** `devices/<device_id>/telemetry` (spec 01, "telemetry message"); every field is required for contract verify. */
export const TelemetryMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    camera_id: RoleLabelSchema,
    detections: z.array(DetectionSchema),
    telemetry: TelemetryBlockSchema,
  })
  .describe('telemetry message (spec 01)');
/** A telemetry message as parsed (see TelemetryMessageSchema). */
export type TelemetryMessage = z.infer<typeof TelemetryMessageSchema>;
