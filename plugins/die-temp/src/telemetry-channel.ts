import { toLookoutError, type Logger, type PluginBus } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import type { DetectionFigures, TelemetryChannel, TelemetryFrame, ThermalReading } from './service.js';

export interface TelemetrySources {
  bus: PluginBus;
  /** The device's role label, the spec's `camera_id`. */
  cameraId: string;
  celsius(): number | null;
  thermal(): ThermalReading;
  /** Why no detector feeds the telemetry (the layer, a failed plugin), said in idle messages. */
  idleReason(): string;
  log: Logger;
}

const NOT_DETECTING = { fps: 0, camera_fps: null, skipped_fps: null, suspended_since: null };

/**
 * The `telemetry` topic at every layer. While a detector is attached it publishes one message per
 * frame, which says when detection is suspended (and since when): no detections then is not an
 * empty scene. Otherwise (layer 0, a detector that failed) one per die reading, with no detections, an fps
 * of 0 and `detection: "off"` with the reason, so that the hub still learns the die temperature.
 */
export class Telemetry implements TelemetryChannel {
  private attached = 0;
  private idleFailing = false;

  constructor(private readonly s: TelemetrySources) {}

  attach(): () => void {
    this.attached++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.attached--;
    };
  }

  publishFrame(frame: TelemetryFrame): Promise<void> {
    const f = frame.figures;
    return this.s.bus.publish('telemetry', this.message(frame.timestamp, frame.detections, f, f.state, f.reason));
  }

  /** A die reading (or a failed one) while no detector is attached. */
  idle(now: number): void {
    if (this.attached > 0 || !this.s.bus.connected) return;
    const message = this.message(new Date(now).toISOString(), [], NOT_DETECTING, 'off', this.s.idleReason());
    this.s.bus.publish('telemetry', message).then(
      () => (this.idleFailing = false),
      (err: unknown) => {
        // Once per outage: an idle message lost is replaced by the next reading's.
        if (!this.idleFailing) this.s.log.warn({ code: toLookoutError(err).code }, `telemetry not published: ${toLookoutError(err).message}`);
        this.idleFailing = true;
      },
    );
  }

  private message(
    timestamp: string,
    detections: Detection[],
    figures: Pick<DetectionFigures, 'fps' | 'camera_fps' | 'skipped_fps' | 'suspended_since'>,
    detection: DetectionFigures['state'] | 'off',
    reason: string | null,
  ) {
    const celsius = this.s.celsius();
    const thermal = this.s.thermal();
    return {
      timestamp,
      camera_id: this.s.cameraId,
      detections,
      telemetry: {
        die_temp: celsius === null ? null : Math.round(celsius * 10) / 10,
        fps: figures.fps,
        camera_fps: figures.camera_fps,
        skipped_fps: figures.skipped_fps,
        thermal_state: thermal.state,
        thermal_state_reason: thermal.reason,
        detection,
        detection_reason: reason,
        suspended_since: figures.suspended_since,
      },
    };
  }
}
