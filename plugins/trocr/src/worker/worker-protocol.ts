/**
 * Messages between the cascade (the device's main thread) and its worker thread, where the two
 * onnxruntime sessions live: onnxruntime-node runs a session synchronously on the calling thread,
 * so reading a crop there would stall the detector for the whole encode and 20 decoder steps.
 */
import type { StopReason } from '../model/greedy-decode.js';

export type CropBox = readonly [number, number, number, number];

export interface OpenRequest {
  kind: 'open';
  encoderPath: string;
  decoderPath: string;
  threads: number;
}

export interface ReadRequest {
  kind: 'read';
  job: number;
  /** A copy of the frame (packed BGR888), transferred. */
  frame: { width: number; height: number; data: Uint8Array };
  boxes: CropBox[];
}

export interface CloseRequest {
  kind: 'close';
}

export type WorkerRequest = OpenRequest | ReadRequest | CloseRequest;

export interface WorkerError {
  code: string;
  message: string;
  mismatches?: string[];
}

export interface OpenedReply {
  kind: 'opened';
  vocabSize: number | null;
  cropKernel: 'native' | 'typescript';
}

export interface CropRead {
  tokens: number[];
  stop: StopReason;
  confidence: number;
  steps: number;
  encoderMs: number;
  decoderMs: number;
  /** The frame pixels the crop took: [x, y, width, height]. */
  rect: [number, number, number, number];
}

export interface ReadReply {
  kind: 'read';
  job: number;
  reads: CropRead[];
}

export interface FailedReply {
  kind: 'failed';
  /** The read that failed; absent when opening failed. */
  job?: number;
  error: WorkerError;
}

export interface ClosedReply {
  kind: 'closed';
}

export type WorkerReply = OpenedReply | ReadReply | FailedReply | ClosedReply;
