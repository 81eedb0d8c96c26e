import { toLookoutError, type Logger, type PluginBus, type PluginClock } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import type { FrameSource } from '../../camera/src/service.js';
import type { DieTemperature, TelemetryChannel } from '../../die-temp/src/service.js';
import { countGatedPersons } from './model/class-maps.js';
import type { Pipeline } from './pipeline.js';
import { CounterRate, RateMeter } from './rate-meter.js';

export interface LatestResult {
  timestamp: string;
  dets: Detection[];
  person_count: number;
  temp_c: number | null;
}

export interface LoopState {
  /** Frames through the detector per second, over a sliding window; 0 while suspended. */
  achievedFps: number;
  /** Frames the camera delivered per second (from its frame index); null until two frames were read. */
  cameraFps: number | null;
  /** Camera frames per second the detector did not process; null while the camera rate is unknown. */
  skippedFps: number | null;
  framesProcessed: number;
  /** Why the last frame failed, as every error is said: {code, message}; null once a frame succeeds. */
  lastError: { code: string; message: string } | null;
  latest: LatestResult | null;
  /** Set while the thermal governor suspends neural work: since when (ISO 8601) and why. */
  suspension: { since: string; reason: string } | null;
}

/**
 * Reads a frame at the detector stride, runs the pipeline and publishes `dets`, and `telemetry`
 * through the die-temp plugin's channel (which owns it so that layer 0 publishes it too).
 * Frames never overlap: a slow frame delays the next one, and the achieved rate says so. While
 * neural work is suspended (thermal critical) telemetry goes on without detections, and its rates
 * say so too: the detection rate is measured over frames actually detected, never the stride.
 */
export class DetectionLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly detectionRate = new RateMeter();
  private readonly cameraRate = new CounterRate();
  readonly state: LoopState = { achievedFps: 0, cameraFps: null, skippedFps: null, framesProcessed: 0, lastError: null, latest: null, suspension: null };

  constructor(
    private readonly deps: {
      source: FrameSource;
      pipeline: Pipeline;
      temperature: DieTemperature;
      telemetry: TelemetryChannel;
      bus: PluginBus;
      clock: PluginClock;
      log: Logger;
      cameraId: string;
      strideFps: number;
      onError(message: string | null): void;
    },
  ) {}

  start(): void {
    this.schedule(0);
  }

  /** The current stride: lowered by the thermal governor at WARN, never raised above RF_DETR_STRIDE_FPS. */
  strideFps(): number {
    return Math.min(this.deps.pipeline.throttle.strideFps ?? Infinity, this.deps.strideFps);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.deps.clock.clear(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimeout(
      () => {
        this.running = this.tick();
      },
      Math.max(0, delayMs),
    );
  }

  private async tick(): Promise<void> {
    const { clock, pipeline, bus, cameraId } = this.deps;
    const started = clock.now();
    try {
      const frame = await this.deps.source.read();
      this.cameraRate.sample(frame.index, frame.timestampMs);
      const celsius = this.deps.temperature.current();
      const timestamp = new Date(clock.now()).toISOString();
      let dets: Detection[] = [];
      const suspended = pipeline.throttle.suspended;
      const since = pipeline.suspendedSince ?? clock.now();
      // A suspension keeps its start and reason while it lasts; a new one (off and on again) gets its own.
      if (!suspended) this.state.suspension = null;
      else if (this.state.suspension?.since !== new Date(since).toISOString()) this.state.suspension = this.suspension(since, celsius);
      if (suspended) {
        // No frame is detected: the window starts again when detection resumes.
        this.detectionRate.reset();
      } else {
        const period = 1000 / this.strideFps();
        dets = await pipeline.process(frame);
        this.detectionRate.mark(started, period);
        const person_count = countGatedPersons(dets);
        this.state.latest = { timestamp, dets, person_count, temp_c: celsius };
        this.state.framesProcessed++;
        // captured_at and the frame's size let a reader pair the boxes with a picture of the same instant and put them on it (DESIGN.md).
        const frameFacts = { captured_at: new Date(frame.timestampMs).toISOString(), frame_width: frame.width, frame_height: frame.height };
        this.send(bus.publish('dets', { timestamp, camera_id: cameraId, dets, person_count, rf_detr_precomputed: true, ...frameFacts }));
      }
      this.measure(clock.now(), suspended);
      const { achievedFps, cameraFps, skippedFps, suspension } = this.state;
      this.send(
        this.deps.telemetry.publishFrame({
          timestamp,
          detections: dets,
          figures: {
            fps: Math.round(achievedFps),
            camera_fps: round1(cameraFps),
            skipped_fps: round1(skippedFps),
            state: suspension ? 'suspended' : 'running',
            suspended_since: suspension?.since ?? null,
            reason: suspension?.reason ?? null,
          },
        }),
      );
      if (this.state.lastError) this.deps.onError(null);
      this.state.lastError = null;
    } catch (err) {
      const { code, message } = toLookoutError(err);
      if (message !== this.state.lastError?.message) this.deps.log.warn({ err }, 'detection frame failed');
      this.state.lastError = { code, message };
      this.deps.onError(message);
    }
    this.schedule(started + 1000 / this.strideFps() - clock.now());
  }

  /** A suspension just seen: it began when the governor set the throttle; the die's state says why. */
  private suspension(since: number, celsius: number | null): { since: string; reason: string } {
    const state = this.deps.temperature.thermal().state;
    const at = celsius === null ? '' : ` (die at ${round1(celsius)} C)`;
    return { since: new Date(since).toISOString(), reason: `${state ?? 'thermal'}${at}: the thermal governor suspended neural work` };
  }

  /** The rates as of `now`: detection over frames detected, camera over frames delivered, skipped the difference. */
  private measure(now: number, suspended: boolean): void {
    const detected = suspended ? 0 : this.detectionRate.rate(now);
    const camera = this.cameraRate.rate();
    this.state.achievedFps = detected;
    this.state.cameraFps = camera;
    this.state.skippedFps = camera === null ? null : Math.max(0, camera - detected);
  }

  /**
   * Hands a message to the bus without waiting for the broker: detection keeps its rate through a
   * broker outage (the device's bus keeps QoS 1 messages in its outbox and sends them in order).
   * A publish that fails (an invalid message, a closed bus) is the frame's error, as a failed frame is.
   */
  private send(publish: Promise<void>): void {
    publish.catch((err: unknown) => {
      if (this.stopped) return;
      const { code, message } = toLookoutError(err);
      if (message !== this.state.lastError?.message) this.deps.log.warn({ err }, 'detection message not published');
      this.state.lastError = { code, message };
      this.deps.onError(message);
    });
  }
}

function round1(n: number | null): number | null {
  return n === null ? null : Math.round(n * 10) / 10;
}
