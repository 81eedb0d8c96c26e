import { isObject } from 'lookout/core';
import type { HistorySample } from './service.js';

/** The numbers a telemetry message carries (spec 01 `telemetry` block): die temperature, camera and detection rates. */
export function readingOfTelemetry(message: Record<string, unknown>, at: number, personCount: number | null): HistorySample {
  const block = isObject(message.telemetry) ? message.telemetry : {};
  return {
    t: at,
    die_temp_c: num(block.die_temp),
    camera_fps: num(block.camera_fps),
    detection_fps: num(block.fps),
    person_count: personCount,
  };
}

/** A dets message adds only its person count. */
export function readingOfDets(message: Record<string, unknown>, at: number): HistorySample {
  return { t: at, die_temp_c: null, camera_fps: null, detection_fps: null, person_count: num(message.person_count) };
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
