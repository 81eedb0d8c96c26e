import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LookoutError, toLookoutError } from 'lookout/core';
import { type ChunkSidecar, type DetectionSummary, type VideoUnderstandResult } from 'lookout/core/contracts';
import { accessUnitsOf, jpegFromHevc } from 'lookout/lib/media';
import type { ChunkIndex } from './chunk-index.js';
import { files } from './chunk-files.js';
import { describeClip, type DescriberOptions } from './describer.js';
import { parseDetsLog, summarize, type DetsLine } from './detection-log.js';

export interface UnderstandArgs {
  chunk?: string;
  start?: string;
  end?: string;
  describe: boolean;
}

export interface UnderstandDeps {
  dir: string;
  index: ChunkIndex;
  inProgress: () => { name: string; startedAtMs: number; dets: readonly DetsLine[] } | null;
  personGate: number;
  describer: Omit<DescriberOptions, 'signal'> | undefined;
  jpegTimeoutMs: number;
}

/** A range is answered from its chunks' logs; a day of them is plenty for one call. */
const MAX_RANGE_MS = 24 * 3600 * 1000;

/**
 * video_understand: the device's own counts, classes and tracks over a chunk or a time range, from
 * the detection logs written beside the chunks; then, when a describer is configured, its text for
 * one picture of the clip. A description never changes a count, and a describer that fails is a
 * `description_reason`, not a failed tool.
 */
export async function videoUnderstand(args: UnderstandArgs, deps: UnderstandDeps, signal?: AbortSignal): Promise<VideoUnderstandResult> {
  let startMs: number;
  let endMs: number;
  let chunks: ChunkSidecar[];
  let lines: DetsLine[] = [];
  if (args.chunk !== undefined) {
    const sidecar = deps.index.get(args.chunk);
    if (!sidecar) throw new LookoutError('recording_not_found', `no complete chunk named ${args.chunk}`, { details: { chunk: args.chunk } });
    chunks = [sidecar];
    startMs = Date.parse(sidecar.started_at);
    endMs = Date.parse(sidecar.ended_at);
    lines = await readLog(deps.dir, sidecar.name);
  } else {
    startMs = Date.parse(args.start!);
    endMs = Date.parse(args.end!);
    if (!(endMs > startMs)) throw new LookoutError('tool_arguments_invalid', 'end must be after start', { details: { start: args.start, end: args.end } });
    if (endMs - startMs > MAX_RANGE_MS)
      throw new LookoutError('tool_arguments_invalid', 'a range is at most 24 h', { details: { start: args.start, end: args.end } });
    chunks = deps.index.all().filter((c) => Date.parse(c.started_at) < endMs && Date.parse(c.ended_at) > startMs);
    for (const c of chunks) lines.push(...(await readLog(deps.dir, c.name)));
    const open = deps.inProgress();
    if (open && open.startedAtMs < endMs) lines.push(...open.dets);
    lines = lines.filter((l) => l.t >= startMs && l.t < endMs);
  }
  const summary = summarize(lines, deps.personGate);
  const result = {
    start: new Date(startMs).toISOString(),
    end: new Date(endMs).toISOString(),
    chunks: chunks.map((c) => c.name),
    ...summary,
    track_count: summary.track_ids.length,
  };
  return { ...result, ...(await description(args, deps, chunks, startMs, endMs, summary, signal)) };
}

async function description(
  args: UnderstandArgs,
  deps: UnderstandDeps,
  chunks: ChunkSidecar[],
  startMs: number,
  endMs: number,
  summary: DetectionSummary,
  signal?: AbortSignal,
): Promise<{ description: string | null; description_reason: string | null }> {
  const none = (reason: string) => ({ description: null, description_reason: reason });
  if (!args.describe) return none('not asked for (describe: false)');
  if (!deps.describer) return none('no describer configured (VIDEO_DESCRIBER_URL is not set): counts only');
  if (chunks.length === 0) return none('no recorded chunk covers the clip');
  let jpeg: Buffer;
  try {
    jpeg = await pictureOf(deps, chunks, (startMs + endMs) / 2, signal);
  } catch (err) {
    return none(`no picture of the clip: ${toLookoutError(err).message}`);
  }
  try {
    const text = await describeClip({ ...deps.describer, ...(signal ? { signal } : {}) }, countsText(startMs, endMs, summary), jpeg);
    return { description: text, description_reason: null };
  } catch (err) {
    return none(`describer failed: ${(err as Error).message}`);
  }
}

/** The picture at the middle of the clip: decoded from the keyframe before it, so only one GOP is decoded. */
async function pictureOf(deps: UnderstandDeps, chunks: ChunkSidecar[], midMs: number, signal?: AbortSignal): Promise<Buffer> {
  const chunk = chunks.find((c) => Date.parse(c.started_at) <= midMs && Date.parse(c.ended_at) > midMs) ?? chunks[0];
  const aus = accessUnitsOf(await readFile(join(deps.dir, chunk.name)));
  if (aus.length === 0 || !aus[0].keyframe) throw new LookoutError('recording_unreadable', `chunk ${chunk.name} holds no picture a decoder can start on`);
  const at = Math.min(aus.length - 1, Math.max(0, Math.floor(((midMs - Date.parse(chunk.started_at)) / 1000) * chunk.fps)));
  let key = at;
  while (!aus[key].keyframe) key--;
  const stream = Buffer.concat(aus.slice(key, at + 1).map((a) => a.data));
  try {
    return await jpegFromHevc(stream, { width: Math.min(chunk.width, 640), quality: 75, timeoutMs: deps.jpegTimeoutMs, ...(signal ? { signal } : {}) });
  } catch (err) {
    throw new LookoutError('recording_unreadable', `chunk ${chunk.name} does not decode: ${toLookoutError(err).message}`, { cause: err });
  }
}

function countsText(startMs: number, endMs: number, s: DetectionSummary): string {
  const classes = Object.values(s.classes)
    .map((c) => `${c.label}: at most ${c.max_count} at once (best confidence ${c.max_confidence.toFixed(2)})`)
    .join('; ');
  return [
    `Clip from ${new Date(startMs).toISOString()} to ${new Date(endMs).toISOString()}.`,
    `The device's detector counted (authoritative): persons over the gate at most ${s.person_max_count} at once;`,
    classes ? `classes: ${classes};` : 'no detections;',
    `${s.track_ids.length} tracked objects.`,
    'Describe what the picture shows in one or two sentences.',
  ].join(' ');
}

async function readLog(dir: string, chunk: string): Promise<DetsLine[]> {
  try {
    return parseDetsLog(await readFile(join(dir, files.detsLog(chunk)), 'utf8'));
  } catch {
    return [];
  }
}
