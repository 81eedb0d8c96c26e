import { LookoutError } from 'lookout/core';
import type { CameraIntrinsics, Frame, FrameSource } from './service.js';
import type { Scenario, TemperaturePoint } from './scenario-schema.js';
import { SceneRenderer, SIM_INTRINSICS } from './render-scene.js';
import { temperatureAt } from './temperature-script.js';

export interface SimFrameSourceOptions {
  /** Time source in ms; `read()` without an argument uses now() minus the time the source was made. */
  now?: () => number;
  /** Added to atMs to give frame.timestampMs (epoch ms); defaults to now() when the source is made. */
  originMs?: number;
  intrinsics?: CameraIntrinsics;
}

/**
 * Frames of a scenario as a function of time: read(atMs) renders the scene at atMs modulo the
 * scenario's duration, so the same instant always gives the same pixels and ground truth, and a
 * long run loops the clip. frame.index counts frame periods since the start and keeps rising across
 * loops, so consumers see time go forward.
 */
export class SimFrameSource implements FrameSource {
  readonly width: number;
  readonly height: number;
  readonly nominalFps: number;
  readonly intrinsics: CameraIntrinsics;
  readonly scenario: Scenario;
  private readonly renderer: SceneRenderer;
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly originMs: number;
  private closed = false;

  constructor(scenario: Scenario, options: SimFrameSourceOptions = {}) {
    this.scenario = scenario;
    this.intrinsics = options.intrinsics ?? SIM_INTRINSICS;
    this.renderer = new SceneRenderer(scenario, { intrinsics: this.intrinsics });
    this.width = this.renderer.width;
    this.height = this.renderer.height;
    this.nominalFps = scenario.fps;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.originMs = options.originMs ?? this.startedAt;
  }

  get durationMs(): number {
    return this.scenario.durationS * 1000;
  }

  /** Milliseconds since the source was made, by its clock. */
  elapsedMs(): number {
    return this.now() - this.startedAt;
  }

  async read(atMs?: number): Promise<Frame> {
    return this.readSync(atMs);
  }

  /** The same as read(), for benchmarks and tests that step through time in a loop. */
  readSync(atMs: number = this.elapsedMs()): Frame {
    if (this.closed) throw new LookoutError('internal', 'the simulated frame source is closed');
    if (!Number.isFinite(atMs) || atMs < 0) throw new LookoutError('bad_request', `atMs must be a finite number >= 0, got ${atMs}`);
    const tS = (atMs % this.durationMs) / 1000;
    const { data, truth } = this.renderer.render(tS);
    return {
      index: Math.floor((atMs * this.nominalFps) / 1000 + 1e-9),
      timestampMs: this.originMs + atMs,
      width: this.width,
      height: this.height,
      format: 'bgr888',
      data,
      truth,
    };
  }

  /** The scenario's die temperature at atMs (defaults to now), or undefined when it has no script. */
  temperatureAt(atMs: number = this.elapsedMs()): number | undefined {
    const script: TemperaturePoint[] | undefined = this.scenario.temperature;
    return script ? temperatureAt(script, atMs / 1000) : undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
