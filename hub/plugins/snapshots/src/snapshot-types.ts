import type { RegisteredDevice } from '../../registry/src/service.js';

/** Which step of the chain served a snapshot (the `X-Lookout-Snapshot-Source` header). */
export type SnapshotSource = 'tool' | 'live_tail' | 'ssh';

export interface SnapshotRequest {
  device: RegisteredDevice;
  width: number;
  quality: number;
  signal: AbortSignal;
}

export interface Snapshot {
  jpeg: Buffer;
  source: SnapshotSource;
  /** Capture time when the step knows it (ISO 8601). */
  capturedAt?: string;
  /** live_tail: whether the tail was already warm. */
  tail?: 'warm' | 'cold';
  /** ssh: the chunk the picture came from. */
  chunk?: string;
}

/** One step's failure, as the 503 lists it. */
export interface StepFailure {
  step: SnapshotSource;
  code: string;
  message: string;
}

export function isJpeg(bytes: Buffer): boolean {
  return bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8;
}
