import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ChunkSidecarSchema, type ChunkSidecar } from 'lookout/core/contracts';
import { writeFileAtomic } from 'lookout/core';
import { files } from './chunk-files.js';
import { justification, summarize, type DetsLine, type JustifyGates } from './detection-log.js';

/** What the writer (or recovery) knows of a complete chunk. */
export interface ChunkFacts {
  dir: string;
  name: string;
  startedAtMs: number;
  /**
   * Capture time of the last picture (epoch ms), when known: with frames dropped before the encoder
   * the chunk spans more wall time than its pictures at the encoder's rate.
   */
  lastCapturedAtMs?: number;
  frames: number;
  keyframes: number;
  fps: number;
  sizeBytes: number;
  width: number;
  height: number;
  dets: readonly DetsLine[];
  /** Detector results per second while the chunk was written (0 without a detector). */
  strideFps: number;
  recovered?: boolean;
}

/**
 * A raw stream has no timestamps: duration_s is the media duration (its pictures at the encoder's
 * rate). ended_at is wall time: the capture of the last picture plus one frame period, so chunks
 * meet without gaps when frames were dropped; without capture times (recovery) it is start + duration.
 */
export function buildSidecar(f: ChunkFacts, gates: JustifyGates): ChunkSidecar {
  const durationS = f.frames / f.fps;
  const detections = summarize(f.dets, gates.person);
  const reason = justification(detections, gates);
  const endedAtMs =
    f.lastCapturedAtMs !== undefined && f.lastCapturedAtMs >= f.startedAtMs
      ? f.lastCapturedAtMs + Math.round(1000 / f.fps)
      : f.startedAtMs + Math.round(durationS * 1000);
  return ChunkSidecarSchema.parse({
    version: 1,
    name: f.name,
    path: join(f.dir, f.name),
    started_at: new Date(f.startedAtMs).toISOString(),
    ended_at: new Date(endedAtMs).toISOString(),
    duration_s: Math.round(durationS * 1000) / 1000,
    frame_count: f.frames,
    keyframe_count: f.keyframes,
    fps: f.fps,
    size_bytes: f.sizeBytes,
    codec: 'hevc',
    width: f.width,
    height: f.height,
    justified: reason !== null,
    justified_reason: reason,
    rfdetr_stride_fps: Math.round(f.strideFps * 10) / 10,
    detections,
    ...(f.recovered ? { recovered: true } : {}),
  });
}

export async function writeSidecar(dir: string, sidecar: ChunkSidecar): Promise<void> {
  await writeFileAtomic(join(dir, files.sidecar(sidecar.name)), `${JSON.stringify(sidecar)}\n`);
}

/** The chunk's sidecar from its file's text, or undefined when it is missing or not a valid sidecar of that chunk. */
export function sidecarOf(chunk: string, text: string | undefined): ChunkSidecar | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = ChunkSidecarSchema.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.name === chunk ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The chunk's sidecar, or undefined when it is missing or not a valid sidecar of that chunk. */
export async function readSidecar(dir: string, chunk: string): Promise<ChunkSidecar | undefined> {
  return sidecarOf(chunk, await readFile(join(dir, files.sidecar(chunk)), 'utf8').catch(() => undefined));
}
