import { serviceToken } from 'lookout/core';
import type { Scenario } from './scenario-schema.js';

/** One object of a simulated scene, as it truly is in a frame (production class ids). */
export interface GroundTruthObject {
  /** Identity of the object across frames. */
  id: number;
  classId: number;
  label: string;
  /** [x1, y1, x2, y2] in pixels of the frame. */
  box: [number, number, number, number];
  /** Distance along the optical axis, metres. */
  depthM: number;
  /** Fraction of the object visible, 0 (hidden) to 1. */
  visibility: number;
}

export interface Frame {
  index: number;
  timestampMs: number;
  width: number;
  height: number;
  /** Packed BGR888, width*height*3 bytes, row-major. */
  format: 'bgr888';
  data: Uint8Array;
  /** Present for simulated sources only. */
  truth?: GroundTruthObject[];
}

export interface CameraIntrinsics {
  fx: number;
  fy: number;
  cx: number;
  cy: number;
}

export interface FrameSource {
  readonly width: number;
  readonly height: number;
  readonly nominalFps: number;
  readonly intrinsics: CameraIntrinsics;
  /** The frame at `atMs` since the source started (defaults to now): deterministic for sim sources. */
  read(atMs?: number): Promise<Frame>;
  close(): Promise<void>;
}

export const FrameSourceToken = serviceToken<FrameSource>('frame-source');

/** The running scenario, provided by the camera plugin in sim mode (the die-temp plugin reads its script). */
export interface SimScenarioInfo {
  name: string;
  path: string;
  scenario: Scenario;
  /** Scripted die temperature at atMs since the source started (defaults to now); undefined without a script. */
  temperatureAt(atMs?: number): number | undefined;
}

export const SimScenarioToken = serviceToken<SimScenarioInfo>('sim-scenario');
