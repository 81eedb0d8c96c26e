import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CHUNK_NAME_PATTERN, type ChunkSidecar } from 'lookout/core/contracts';
import { toLookoutError, writeFileAtomic } from 'lookout/core';
import { accessUnitsOf, countPictures } from 'lookout/lib/media';
import { files, parseChunkName } from './chunk-files.js';
import { assertPlays, probeSize } from './chunk-probe.js';
import { parseDetsLog, type DetsLine, type JustifyGates } from './detection-log.js';
import { buildSidecar, readSidecar, writeSidecar } from './sidecar.js';
import { syncDir } from './chunk-writer.js';

export interface RecoveryOptions {
  dir: string;
  /** The encoder's rate: a raw stream carries none, and a rebuilt sidecar needs one. */
  fps: number;
  width: number;
  height: number;
  /** The justification gates of a rebuilt sidecar. */
  gates: JustifyGates;
  /** Bound of one ffmpeg check. */
  timeoutMs?: number;
}

export interface RecoveryReport {
  /** `.part` leftovers made into chunks (whole pictures only). */
  recovered: string[];
  /** Chunks that had no (valid) sidecar and got one rebuilt from the stream. */
  sidecarsRebuilt: string[];
  /** What was removed, and why. */
  removed: { name: string; reason: string }[];
}

const CHUNK_PART = /^\.(.+\.h265)\.part$/;
const LOG_PART = /^\.(.+)\.dets\.jsonl\.part$/;
const ATOMIC_TEMP = /^\..+\.[0-9a-f]{12}\.tmp$/;
/** A recovered chunk while it is checked: a crash before the check leaves only this dot-name. */
const RECOVERING = /^\..+\.h265\.recovering$/;
const recoveringName = (chunk: string) => `.${chunk}.recovering`;

/**
 * Start-up repair of the recordings folder after a crash or SIGKILL: leftovers of a chunk in
 * progress are remuxed into a chunk of their whole pictures when that plays (else removed), a chunk
 * without a valid sidecar gets one rebuilt from its stream (or is removed when it holds no picture
 * or does not decode), and sidecars and logs whose chunk is gone are removed. After it, every chunk
 * in the folder has a sidecar and plays.
 */
export async function recoverRecordings(o: RecoveryOptions): Promise<RecoveryReport> {
  const report: RecoveryReport = { recovered: [], sidecarsRebuilt: [], removed: [] };
  const timeoutMs = o.timeoutMs ?? 30_000;
  const names = await readdir(o.dir);
  for (const n of names.filter((x) => ATOMIC_TEMP.test(x))) await rm(join(o.dir, n), { force: true });
  // A recovery cut by a crash before its check: the `.part` it came from is still there and is tried again.
  for (const n of names.filter((x) => RECOVERING.test(x))) {
    await rm(join(o.dir, n), { force: true });
    report.removed.push({ name: n, reason: 'a recovery interrupted before its check' });
  }

  for (const n of names) {
    const chunk = CHUNK_PART.exec(n)?.[1];
    if (chunk && CHUNK_NAME_PATTERN.test(chunk)) await recoverPart(o, chunk, timeoutMs, report);
  }

  // Logs of chunks in progress whose chunk part was gone (never written, or removed above).
  for (const n of await readdir(o.dir)) {
    const base = LOG_PART.exec(n)?.[1];
    if (base === undefined) continue;
    const chunk = `${base}.h265`;
    if (await exists(join(o.dir, chunk))) await rename(join(o.dir, n), join(o.dir, files.detsLog(chunk)));
    else await rm(join(o.dir, n), { force: true });
  }

  const present = new Set(await readdir(o.dir));
  for (const chunk of [...present].filter((x) => CHUNK_NAME_PATTERN.test(x)).sort()) {
    if (await readSidecar(o.dir, chunk)) continue;
    await rebuildSidecar(o, chunk, timeoutMs, report);
  }

  // Sidecars and logs of chunks that are gone (a prune or a crash between two removals).
  for (const n of await readdir(o.dir)) {
    const m = /^(.+)\.(json|dets\.jsonl)$/.exec(n);
    if (!m || n.startsWith('.')) continue;
    const chunk = `${m[1]}.h265`;
    if (CHUNK_NAME_PATTERN.test(chunk) && !(await exists(join(o.dir, chunk)))) await rm(join(o.dir, n), { force: true });
  }
  return report;
}

async function recoverPart(o: RecoveryOptions, chunk: string, timeoutMs: number, report: RecoveryReport): Promise<void> {
  const partPath = join(o.dir, files.part(chunk));
  const logPart = join(o.dir, files.part(files.detsLog(chunk)));
  const dropPart = async (reason: string) => {
    await rm(partPath, { force: true });
    await rm(logPart, { force: true });
    report.removed.push({ name: files.part(chunk), reason });
  };
  if (await exists(join(o.dir, chunk))) return dropPart('a complete chunk of that name exists');
  const aus = accessUnitsOf(await readFile(partPath));
  const first = aus.findIndex((a) => a.keyframe);
  // The last picture may have been cut by the crash: only the ones before it are known whole.
  const whole = first < 0 ? [] : aus.slice(first, -1);
  if (whole.length === 0) return dropPart('no whole picture after a keyframe');
  // Written and checked under a dot-name no reader lists, renamed into place only once it plays.
  const checking = join(o.dir, recoveringName(chunk));
  await writeFileAtomic(checking, Buffer.concat(whole.map((a) => a.data)));
  try {
    await assertPlays(checking, o.fps, timeoutMs);
  } catch (err) {
    await rm(checking, { force: true });
    return dropPart(`does not decode: ${toLookoutError(err).message}`);
  }
  const dets = await readLog(join(o.dir, files.detsLog(chunk)), logPart);
  await writeFileAtomic(join(o.dir, files.detsLog(chunk)), dets.map((l) => `${JSON.stringify(l)}\n`).join(''));
  await rm(logPart, { force: true });
  await rename(checking, join(o.dir, chunk));
  await syncDir(o.dir);
  await writeSidecar(
    o.dir,
    sidecarOf(o, chunk, {
      frames: whole.length,
      keyframes: whole.filter((a) => a.keyframe).length,
      sizeBytes: whole.reduce((n, a) => n + a.data.length, 0),
      dets,
    }),
  );
  await rm(partPath, { force: true });
  report.recovered.push(chunk);
}

async function rebuildSidecar(o: RecoveryOptions, chunk: string, timeoutMs: number, report: RecoveryReport): Promise<void> {
  const path = join(o.dir, chunk);
  const remove = async (reason: string) => {
    await rm(join(o.dir, files.detsLog(chunk)), { force: true });
    await rm(path, { force: true });
    await rm(join(o.dir, files.sidecar(chunk)), { force: true });
    report.removed.push({ name: chunk, reason });
  };
  const bytes = await readFile(path);
  const { frames, keyframes } = countPictures(bytes);
  if (frames === 0 || keyframes === 0) return remove('holds no complete picture');
  let size = { width: o.width, height: o.height };
  try {
    await assertPlays(path, o.fps, timeoutMs);
    size = await probeSize(path, timeoutMs);
  } catch (err) {
    return remove(`does not decode: ${toLookoutError(err).message}`);
  }
  const dets = await readLog(join(o.dir, files.detsLog(chunk)));
  await writeSidecar(o.dir, sidecarOf({ ...o, ...size }, chunk, { frames, keyframes, sizeBytes: bytes.length, dets }, (await stat(path)).mtimeMs));
  report.sidecarsRebuilt.push(chunk);
}

function sidecarOf(
  o: RecoveryOptions,
  chunk: string,
  f: { frames: number; keyframes: number; sizeBytes: number; dets: DetsLine[] },
  mtimeMs?: number,
): ChunkSidecar {
  const seconds = f.frames / o.fps;
  // The name carries the start; a chunk named otherwise ended when it was last written.
  const startedAtMs = parseChunkName(chunk)?.startedAtMs ?? (mtimeMs ?? Date.now()) - seconds * 1000;
  return buildSidecar(
    {
      dir: o.dir,
      name: chunk,
      startedAtMs,
      fps: o.fps,
      width: o.width,
      height: o.height,
      ...f,
      strideFps: seconds > 0 ? f.dets.length / seconds : 0,
      recovered: true,
    },
    o.gates,
  );
}

async function readLog(...paths: string[]): Promise<DetsLine[]> {
  for (const p of paths) {
    try {
      return parseDetsLog(await readFile(p, 'utf8'));
    } catch {
      // not there
    }
  }
  return [];
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
