/**
 * Real recording chunks for the media tests: raw H.265 Annex B made by ffmpeg (libx265, small and
 * short to keep the shared machine free), with a sidecar per ChunkSidecarSchema beside each, in a
 * recordings folder as the device's recorder lays it out. Not a test file itself.
 */
import { execFile } from 'node:child_process';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ChunkSidecarSchema, type ChunkSidecar } from '../../../../../core/src/contracts/index.js';

const run = promisify(execFile);

export interface ChunkSpec {
  seconds?: number;
  fps?: number;
  width?: number;
  height?: number;
  /** Start time of the chunk (its name and sidecar). */
  startedAt?: Date;
  seq?: number;
  justified?: boolean;
}

/** `20250101T120000123Z_000001.h265` */
export function chunkNameAt(at: Date, seq: number): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${stamp}_${String(seq).padStart(6, '0')}.h265`;
}

/** Writes one chunk and its sidecar into `dir`; returns the sidecar. */
export async function makeChunk(dir: string, spec: ChunkSpec = {}): Promise<ChunkSidecar> {
  const seconds = spec.seconds ?? 2;
  const fps = spec.fps ?? 5;
  const width = spec.width ?? 320;
  const height = spec.height ?? 240;
  const startedAt = spec.startedAt ?? new Date(Date.now() - seconds * 1000);
  const name = chunkNameAt(startedAt, spec.seq ?? 1);
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  await run('ffmpeg', [
    ...['-hide_banner', '-loglevel', 'error', '-nostdin', '-y'],
    ...['-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=${fps}`, '-t', String(seconds)],
    // No B-frames, as a camera's hardware encoder writes: a raw stream then remuxes to its exact length.
    ...['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', `log-level=error:keyint=${fps}:bframes=0`, '-f', 'hevc', path],
  ]);
  const size = (await stat(path)).size;
  const frames = Math.round(seconds * fps);
  const sidecar = ChunkSidecarSchema.parse({
    version: 1,
    name,
    started_at: startedAt.toISOString(),
    ended_at: new Date(startedAt.getTime() + seconds * 1000).toISOString(),
    duration_s: seconds,
    frame_count: frames,
    keyframe_count: Math.ceil(frames / fps),
    fps,
    size_bytes: size,
    codec: 'hevc',
    width,
    height,
    justified: spec.justified ?? true,
    justified_reason: (spec.justified ?? true) ? 'person over the gate' : null,
    rfdetr_stride_fps: 5,
    detections: { frames_with_detections: 3, person_max_count: 1, classes: { '0': { label: 'person', max_count: 1, max_confidence: 0.9 } }, track_ids: [7] },
  });
  await writeFile(join(dir, name.replace(/\.h265$/, '.json')), JSON.stringify(sidecar));
  return sidecar;
}

/** Seconds of an mp4 as ffprobe reads it, and its video codec. */
export async function probe(path: string): Promise<{ duration: number; codec: string; tag: string }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_name,codec_tag_string', '-of', 'json', path]);
  const j = JSON.parse(stdout) as { format: { duration: string }; streams: { codec_name: string; codec_tag_string: string }[] };
  return { duration: Number(j.format.duration), codec: j.streams[0]?.codec_name ?? '', tag: j.streams[0]?.codec_tag_string ?? '' };
}
