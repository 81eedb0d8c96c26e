import { serviceToken } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';

export type ThermalState = 'NORMAL' | 'THERMAL_WARN' | 'THERMAL_CRITICAL';

/** How hot the die is against the configured thresholds (THERMAL_WARN_C, THERMAL_CRITICAL_C, THERMAL_HYSTERESIS_C). */
export interface ThermalReading {
  /** null while it cannot be known: see `reason`. */
  state: ThermalState | null;
  /** Why `state` is null; null while it is known. */
  reason: string | null;
  /** What keeps `state` unknown: no reading yet, or thresholds that contradict each other. */
  unknown?: 'temperature_unknown' | 'thresholds_invalid';
}

/**
 * The SoC die: its temperature, from a thermal zone file or the simulated temperature script, and
 * its thermal state, at every layer (the thermal governor of layer 4 acts on the state; it does not
 * decide it).
 */
export interface DieTemperature {
  /** Latest reading in degrees Celsius; null while the sensor has never been read (see `reason`). */
  current(): number | null;
  /** Why `current()` is null, or why the last reading failed; null while readings succeed. */
  reason(): string | null;
  onReading(listener: (celsius: number) => void): () => void;
  thermal(): ThermalReading;
  /** Called on every change of the thermal state, after the reading that caused it. */
  onThermalChange(listener: (state: ThermalState, celsius: number) => void): () => void;
}

export const DieTemperatureToken = serviceToken<DieTemperature>('die-temperature');

/** What the detector measured over its frames, and whether it detects, for the telemetry message. */
export interface DetectionFigures {
  /** The spec's `fps`: detection rate over a sliding window, an integer (0 while suspended). */
  fps: number;
  camera_fps: number | null;
  skipped_fps: number | null;
  /** Suspended: the thermal governor stopped neural work; the frame had no detection, not an empty scene. */
  state: 'running' | 'suspended';
  /** When the suspension began (ISO 8601); null while running. */
  suspended_since: string | null;
  /** Why detection is suspended; null while running. */
  reason: string | null;
}

export interface TelemetryFrame {
  timestamp: string;
  detections: Detection[];
  figures: DetectionFigures;
}

/**
 * The `telemetry` topic, owned by the die-temp plugin so that every layer publishes it: at layer 0,
 * one message per die reading without detections; from layer 1, one per detector frame.
 */
export interface TelemetryChannel {
  /** The detector takes the telemetry over while it runs; call the returned function when it stops. */
  attach(): () => void;
  /** One message for a frame (die temperature and thermal state added); settles when the bus took it. */
  publishFrame(frame: TelemetryFrame): Promise<void>;
}

export const TelemetryChannelToken = serviceToken<TelemetryChannel>('telemetry');
